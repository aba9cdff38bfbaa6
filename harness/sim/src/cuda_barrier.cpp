// cuda::barrier<thread_scope_block>: init, arrive and wait, with the checks of their misuse; a
// barrier of its own, apart from __syncthreads() (scheduler.cpp).
#include <cstdint>

#include "scheduler.h"
#include "events.h"

namespace cudasim {
namespace detail {

// ---- cuda::barrier<thread_scope_block> -------------------------------------------------------

static constexpr uint32_t kCBarMagic = 0xB4A21E55u;

static void check_cbar(Worker& w, Thread& t, CBarState* b, const char* what, const char* file, int line) {
  if (b->magic != kCBarMagic)
    thread_fault(w, t, Kind::cuda_barrier_misuse,
                 strf("cuda::barrier misuse at %s: %s: %s on a barrier that was never initialised.\n"
                      "  Call init(&bar, count) once (e.g. from thread 0), then __syncthreads(), before any thread uses it.",
                      where(file, line).c_str(), who(w, t).c_str(), what),
                 where(file, line), "", Facts().set("case", "uninitialised").set("call", what));
}

void cbar_init(CBarState* b, long expected, const char* file, int line) {
  Worker* w = tl_worker;
  if (!w || !tl_thread) device_misuse("init(cuda::barrier*)", file, line);
  if (expected <= 0 || expected > 1024)
    thread_fault(*w, self_thread(), Kind::cuda_barrier_misuse,
                 strf("cuda::barrier misuse at %s: %s: init() with an expected count of %ld; a block barrier counts between 1 "
                      "and 1024 threads.", where(file, line).c_str(), who(*w, self_thread()).c_str(), expected),
                 where(file, line), "", Facts().set("case", "init_count").set("expected", (long long)expected));
  b->magic = kCBarMagic;
  b->expected = (int32_t)expected;
  b->pending = (int32_t)expected;
  b->phase = 0;
  b->init_file = file;
  b->init_line = line;
}

uint64_t cbar_arrive(CBarState* b, long update, bool drop, const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse("cuda::barrier::arrive()", file, line);
  Worker& w = *wk;
  Thread& t = self_thread();
  check_cbar(w, t, b, "arrive()", file, line);
  if (update < 1 || update > b->pending)
    thread_fault(w, t, Kind::cuda_barrier_misuse,
                 strf("cuda::barrier misuse at %s: %s: arrive(%ld) when only %d arrival%s remain in this phase (the barrier was "
                      "initialised for %d at %s).", where(file, line).c_str(), who(w, t).c_str(), update, b->pending,
                      b->pending == 1 ? "" : "s", b->expected, where(b->init_file, b->init_line).c_str()),
                 where(file, line), "",
                 Facts().set("case", "arrive_count").set("update", (long long)update).set("pending", b->pending)
                     .set("expected", b->expected).set("init_site", where(b->init_file, b->init_line)));
  uint64_t token = b->phase;
  if (drop) --b->expected;
  b->pending -= (int32_t)update;
  Observers::cbar_arrive(w, t, b, token, b->pending == 0, file, line);
  if (b->pending == 0) {
    // The phase completes: wake the threads that wait for it.
    ++b->phase;
    b->pending = b->expected;
    for (unsigned i = 0; i < w.sweep_n; ++i) {
      Thread& o = w.threads[i];
      if (o.st == St::AtCBar && o.cbar == b && o.cbar_token == token) {
        o.st = St::Runnable;
        o.ready = 0;
        --w.at_cbar;
        w.woke = true;
      }
    }
  }
  return token;
}

void cbar_wait(CBarState* b, uint64_t token, const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse("cuda::barrier::wait()", file, line);
  Worker& w = *wk;
  Thread& t = self_thread();
  check_cbar(w, t, b, "wait()", file, line);
  if (token == ~0ull || token > b->phase)
    thread_fault(w, t, Kind::cuda_barrier_misuse, strf("cuda::barrier misuse at %s: %s: wait() with a token that arrive() did not return.",
                                       where(file, line).c_str(), who(w, t).c_str()),
                 where(file, line), "", Facts().set("case", "token"));
  if (token < b->phase) {  // that phase has completed already
    Observers::cbar_waited(w, t, b, token);
    return;
  }
  t.st = St::AtCBar;
  t.ready = kNotReady;
  t.cbar = b;
  t.cbar_token = token;
  t.wait_file = file;
  t.wait_line = line;
  t.wait_what = "cuda::barrier::wait()";
  ++w.at_cbar;
  switch_away(w, t);
  Observers::cbar_waited(w, t, b, token);
}

}  // namespace detail
}  // namespace cudasim

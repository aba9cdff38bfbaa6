// The execution engine: worker threads run blocks; a block's threads are fibers scheduled in a
// chosen order inside each barrier interval; barriers and warp collectives are meeting points.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <thread>

#include "internal.h"
#include "events.h"

namespace cudasim {
namespace detail {

__thread Worker* tl_worker = nullptr;
__thread ThreadView* tl_thread = nullptr;
__thread BlockView* tl_block = nullptr;
__thread ThreadView tl_thread_view = {};
__thread BlockView tl_block_view = {};

std::vector<Worker*> all_workers();
uint64_t fiber_switch_count() {
  uint64_t n = 0;
  for (Worker* w : all_workers()) n += 2 * w->progress.load(std::memory_order_relaxed);
  return n;
}
uint64_t threads_run_count() {
  uint64_t n = 0;
  for (Worker* w : all_workers()) n += w->threads_run.load(std::memory_order_relaxed);
  return n;
}

// Counters written by one worker only: a relaxed load and store, no locked instruction.
static inline void bump(std::atomic<uint64_t>& c, uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

void Grid::fail(const Diagnosis& d, const std::string& msg) {
  std::lock_guard<std::mutex> lock(err_mu);
  if (err.code == 0) {
    trace_error(*this, kind_category(d.kind), msg);
    err = ErrorRec(d, msg);
  }
  abort.store(true);
}

static inline uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// Inside a fiber
// ---------------------------------------------------------------------------------------------

static inline Thread& self_thread() { return *reinterpret_cast<Thread*>(tl_thread); }

// Thread::ready for a thread that only a warp collective, a cuda::barrier phase or nothing (it
// has returned or faulted) can make runnable again.
static constexpr uint32_t kNotReady = UINT32_MAX;
// The first thread from `t` on (t, t->next, ...) that can run: runnable, or waiting at a barrier
// that has since been released (an earlier epoch). Null when the sweep is over. The list of a
// sweep ends at the worker's idle thread, which is always "ready" and links to itself.
static inline Thread* next_in_sweep(Worker& w, Thread* t) {
  const uint32_t epoch = w.bar_epoch;
  while (t->ready > epoch) t = t->next;
  if (t == &w.idle) return nullptr;
  // Most threads of a sweep run: bring in the stack of the one after `t` (whose bookkeeping an
  // earlier call prefetched) and the bookkeeping of the one after that.
  Thread* after = t->next;
  fiber_prefetch(after->fiber);
  __builtin_prefetch(after->next);
  return t;
}

// Links the threads of order[0..n) into the sweep list, ending at the worker's idle thread.
static void link_order(Worker& w, unsigned n) {
  for (unsigned i = 0; i + 1 < n; ++i) w.order[i]->next = w.order[i + 1];
  w.order[n - 1]->next = &w.idle;
  w.idle.next = &w.idle;
  w.idle.ready = 0;
}

// Makes `t` the running thread: what the built-ins and the watchdog read.
static inline void enter(Worker& w, Thread& t) {
  t.st = St::Runnable;
  t.ready = 0;
  tl_thread = &t.view;
  tl_thread_view = t.view;
  w.current.store(&t, std::memory_order_relaxed);
  bump(w.progress);
}

// The running thread `t` has blocked (its state says where) or exited: continue with the next
// thread of the sweep directly, or go back to the scheduler when the sweep is over. Returns
// when some thread switches back to `t`. Inlined: at a barrier it is most of what a thread does.
static inline __attribute__((always_inline)) void switch_away(Worker& w, Thread& t) {
  Thread* next = w.grid->abort.load(std::memory_order_relaxed) ? nullptr : next_in_sweep(w, t.next);
  if (next) {
    enter(w, *next);
    fiber_switch(t.fiber, next->fiber);
  } else {
    fiber_switch(t.fiber, w.sched);
  }
}

// The diagnosis of an error in one block (the thread of the running block, when given).
static Diagnosis block_diagnosis(Kind kind, const Worker& w, const Thread* t = nullptr, const std::string& site = "") {
  Diagnosis d;
  d.kind = kind;
  if (!site.empty()) d.sites.push_back(site);
  d.has_block = true;
  d.block = w.block.bid;
  if (t) d.threads.push_back(t->view.tid);
  return d;
}

// Records an error found by the running thread and parks it for good.
[[noreturn]] static void thread_fault(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site = "",
                                      const std::string& detail = "") {
  Diagnosis d = block_diagnosis(kind, w, &t, site);
  d.detail = detail;
  w.grid->fail(d, msg);
  t.st = St::Faulted;
  t.ready = kNotReady;
  for (;;) fiber_switch(t.fiber, w.sched);
}

void thread_fault_ext(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site, const std::string& detail) {
  thread_fault(w, t, kind, msg, site, detail);
}

static void complete_group(Worker& w, unsigned warp_index, WarpGroup& g);
static bool group_complete(const Warp& wp, const WarpGroup& g);

static std::string who(const Worker& w, const Thread& t) {
  return strf("block %s, thread %s", dim_str(w.block.bid, w.block.gdim).c_str(),
              dim_str(t.view.tid, w.block.bdim).c_str());
}

static void thread_entry(void* arg) {
  Thread& t = *static_cast<Thread*>(arg);
  Worker& w = *tl_worker;
  try {
    w.grid->invoke(w.grid->args);
  } catch (const std::exception& e) {
    thread_fault(w, t, Kind::exception, strf("%s: a C++ exception escaped the kernel in %s: %s", kernel_str(w.grid->site).c_str(),
                                         who(w, t).c_str(), e.what()));
  } catch (...) {
    thread_fault(w, t, Kind::exception, strf("%s: an exception escaped the kernel in %s", kernel_str(w.grid->site).c_str(), who(w, t).c_str()));
  }
  t.st = St::Exited;
  t.ready = kNotReady;
  t.bars_at_exit = w.bar_epoch;
  ++w.exited;
  Warp& wp = w.warps[t.linear / 32];
  wp.live &= ~(1u << t.view.lane);
  // A lane that returns no longer counts in its warp's pending *_sync calls.
  for (size_t gi = 0; gi < wp.groups.size();) {
    if (group_complete(wp, wp.groups[gi])) {
      complete_group(w, t.linear / 32, wp.groups[gi]);
      wp.groups.erase(wp.groups.begin() + gi);
    } else {
      ++gi;
    }
  }
  for (;;) switch_away(w, t);  // nobody switches back to an exited thread
}

void device_misuse(const char* what, const char* file, int line) {
  Diagnosis d{Kind::device_code_from_host};
  if (file) d.sites.push_back(where(file, line));
  d.detail = what;
  fatal(d, strf("%s%s was used outside a kernel (in host code). Built-in variables and device synchronisation "
                          "exist only inside a __global__ function and the __device__ functions it calls.",
                          file ? (where(file, line) + ": ").c_str() : "", what));
}

// A thread arrives at a block barrier. The barrier's site is checked here (the predicates of
// __syncthreads_count/and/or are tallied by syncthreads_reduce), so that releasing it costs the
// scheduler nothing per thread: waiting threads carry the epoch after the barrier's, and once
// the epoch moves on they are runnable again. The first arrival records the call site in the
// worker; the others compare with it there. Returns false when the site is not the same pointer
// and line as the first arrival's, for arrive_elsewhere to decide.
static inline bool arrive_at_barrier(Worker& w, Thread& t, const char* what, const char* file, int line) {
  t.st = St::AtBarrier;
  t.ready = w.bar_epoch + 1;  // runnable again once this barrier has released
  t.wait_file = file;
  t.wait_line = line;
  t.wait_what = what;
  if (w.bar_arrived++ == 0) {
    w.bar_file = file;
    w.bar_line = line;
    w.bar_what = what;
    return true;
  }
  return w.bar_line == line && w.bar_what == what && w.bar_file == file;
}

// A later arrival whose site differs from the first arrival's by pointer: the same file named
// by another copy of the string (a header's inline function in two files), or another barrier.
// Out of line, and it switches away itself, so that the common path of __syncthreads() makes
// no call and keeps its values in scratch registers (no saves and restores).
static __attribute__((noinline)) void arrive_elsewhere(Worker& w, Thread& t, const char* what, const char* file, int line) {
  if (w.bar_line != line || w.bar_what != what || std::strcmp(w.bar_file, file) != 0) w.bar_mismatch = true;
  switch_away(w, t);
}

// A running thread (tl_thread set) always has its worker: only workers switch to threads.
void syncthreads(const char* file, int line) {
  if (__builtin_expect(!tl_thread, 0)) device_misuse("__syncthreads()", file, line);
  Worker& w = *tl_worker;
  Thread& t = self_thread();
  if (__builtin_expect(!arrive_at_barrier(w, t, "__syncthreads()", file, line), 0))
    return arrive_elsewhere(w, t, "__syncthreads()", file, line);
  switch_away(w, t);
}

int syncthreads_reduce(int kind, int pred, const char* file, int line) {
  static const char* names[] = {"__syncthreads_count()", "__syncthreads_and()", "__syncthreads_or()"};
  Worker* w = tl_worker;
  if (!w || !tl_thread) device_misuse(names[kind], file, line);
  Thread& t = self_thread();
  if (!arrive_at_barrier(*w, t, names[kind], file, line) &&
      (w->bar_line != line || w->bar_what != names[kind] || std::strcmp(w->bar_file, file) != 0))
    w->bar_mismatch = true;
  pred = pred != 0;
  w->bar_count += pred;
  w->bar_all &= pred;
  w->bar_any |= pred;
  w->bar_kind = kind;
  switch_away(*w, t);
  return w->bar_result;  // computed by the scheduler when the barrier released
}

void threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (Worker* w = tl_worker)
    if (tl_thread) Observers::fence(*w, self_thread());
}

long long device_clock() {
  Worker* w = tl_worker;
  if (!w || !tl_thread) return (long long)std::clock();  // host code: the C library's clock()
  // A count of the thread's own clock reads: the same under every thread order and worker count.
  return (long long)(++self_thread().clock_reads) * 1000;
}

static const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Sync: return "__syncwarp";
    case WarpOp::ShflIdx: return "__shfl_sync";
    case WarpOp::ShflUp: return "__shfl_up_sync";
    case WarpOp::ShflDown: return "__shfl_down_sync";
    case WarpOp::ShflXor: return "__shfl_xor_sync";
    case WarpOp::Ballot: return "__ballot_sync";
    case WarpOp::Any: return "__any_sync";
    case WarpOp::All: return "__all_sync";
    case WarpOp::ReduceAdd: return "__reduce_add_sync";
    case WarpOp::ReduceMin: return "__reduce_min_sync";
    case WarpOp::ReduceMax: return "__reduce_max_sync";
    case WarpOp::Activemask: return "__activemask";
  }
  return "?";
}

static uint64_t poison_bits(int bytes) {
  uint64_t v = 0xCDCDCDCDCDCDCDCDull;
  return bytes >= 8 ? v : (v & ((1ull << (8 * bytes)) - 1));
}

static int64_t as_signed32(uint64_t v) { return (int64_t)(int32_t)(uint32_t)v; }

// All live lanes of the group's mask have arrived: compute every lane's result, wake them up.
static void complete_group(Worker& w, unsigned warp_index, WarpGroup& g) {
  Thread* lanes = &w.threads[warp_index * 32];
  if (g.op == WarpOp::Activemask) {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(g.arrived & (1u << l))) continue;
      lanes[l].warp_result = g.arrived;
      lanes[l].am_mask = g.arrived;
      lanes[l].am_file = g.file;
      lanes[l].am_line = g.line;
      if (lanes[l].st == St::AtWarp) {
        lanes[l].st = St::Runnable;
        lanes[l].ready = 0;
        --w.at_warp;
        w.woke = true;
      }
    }
    Observers::warp_collective(w, warp_index, g);
    return;
  }
  unsigned ballot = 0;
  int64_t red = 0;
  bool first = true;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(g.arrived & (1u << l))) continue;
    if (g.value[l]) ballot |= 1u << l;
    int64_t v = g.is_signed ? as_signed32(g.value[l]) : (int64_t)(uint32_t)g.value[l];
    if (g.op == WarpOp::ReduceAdd) red += v;
    else if (g.op == WarpOp::ReduceMin) red = first ? v : std::min(red, v);
    else if (g.op == WarpOp::ReduceMax) red = first ? v : std::max(red, v);
    first = false;
  }
  for (unsigned l = 0; l < 32; ++l) {
    if (!(g.arrived & (1u << l))) continue;
    uint64_t r = 0;
    unsigned base = l & ~unsigned(g.width - 1);
    int src = -1;
    switch (g.op) {
      case WarpOp::ShflIdx: src = int(base + (unsigned(g.param[l]) & unsigned(g.width - 1))); break;
      case WarpOp::ShflUp: src = (int(l - base) >= g.param[l]) ? int(l) - g.param[l] : int(l); break;
      case WarpOp::ShflDown: src = (int(l - base) + g.param[l] < g.width) ? int(l) + g.param[l] : int(l); break;
      case WarpOp::ShflXor: {
        int s = int(l) ^ g.param[l];
        src = (s >= int(base + g.width) || s > 31 || s < 0) ? int(l) : s;
        break;
      }
      case WarpOp::Ballot: r = ballot; break;
      case WarpOp::Any: r = ballot != 0; break;
      case WarpOp::All: r = (ballot & g.arrived) == g.arrived; break;
      case WarpOp::ReduceAdd:
      case WarpOp::ReduceMin:
      case WarpOp::ReduceMax: r = (uint64_t)red; break;
      default: break;
    }
    if (src >= 0) {
      // A lane that is not taking part (outside the mask, exited, or absent) has no value to give:
      // the GPU returns garbage. That is a bug worth a report, not a silent garbage value.
      if (!(g.arrived & (1u << src))) {
        unsigned n = w.block.bdim.x * w.block.bdim.y * w.block.bdim.z;
        unsigned src_linear = warp_index * 32 + unsigned(src);
        const bool returned = src_linear < n && (g.mask & (1u << src));
        const char* why = src_linear >= n ? "does not exist (the block has fewer threads than the warp has lanes)"
                          : !returned     ? "is not in the mask"
                                          : "has already returned from the kernel";
        if (!w.faulted) {
          w.faulted = true;
          w.grid->fail(block_diagnosis(returned ? Kind::warp_lane_returned : Kind::warp_misuse, w, &lanes[l], where(g.file, g.line)),
                       strf("warp misuse at %s: %s, block %s: lane %u of warp %u reads lane %d through %s, but lane %d %s; it "
                            "would get garbage.\n  Keep every lane whose value is read taking part in the call (no early return "
                            "before it), give absent lanes a neutral value, or read only lanes that exist (e.g. check "
                            "`lane + delta < active lanes`).",
                            where(g.file, g.line).c_str(), kernel_str(w.grid->site).c_str(),
                            dim_str(w.block.bid, w.block.gdim).c_str(), l, warp_index, src, op_name(g.op), src, why));
        }
      }
      r = (g.arrived & (1u << src)) ? g.value[src] : poison_bits(g.value_bytes);
    }
    lanes[l].warp_result = r;
    if (lanes[l].st == St::AtWarp) {
      lanes[l].st = St::Runnable;
      lanes[l].ready = 0;
      --w.at_warp;
      w.woke = true;
    }
  }
  Observers::warp_collective(w, warp_index, g);
}

static bool group_complete(const Warp& wp, const WarpGroup& g) {
  unsigned need = g.mask & wp.live;
  return (g.arrived & need) == need;
}

uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int param, int width, int value_bytes, bool is_signed,
                         const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse(op_name(op), file, line);
  Worker& w = *wk;
  Thread& t = self_thread();
  unsigned lane = t.view.lane, warp_index = t.linear / 32;
  Warp& wp = w.warps[warp_index];
  auto at = [&] { return where(file, line); };  // formatted on error paths only
  if (!(mask & (1u << lane)))
    thread_fault(w, t, Kind::warp_mask_without_self,
                 strf("warp misuse at %s: %s: lane %u calls %s with mask 0x%08x, which does not include lane %u itself.\n"
                      "  Every lane that calls a *_sync intrinsic must be named in its mask.",
                      at().c_str(), who(w, t).c_str(), lane, op_name(op), mask, lane),
                 at());
  if (width <= 0 || width > 32 || (width & (width - 1)))
    thread_fault(w, t, Kind::warp_misuse, strf("warp misuse at %s: %s: width %d of %s is not a power of two between 1 and 32.", at().c_str(),
                                    who(w, t).c_str(), width, op_name(op)),
                 at());
  WarpGroup* g = nullptr;
  for (WarpGroup& x : wp.groups) {
    if (op == WarpOp::Activemask || x.op == WarpOp::Activemask) {
      // Lanes meet in __activemask() by call site, not by mask.
      if (op == x.op && x.line == line && x.file && file && std::strcmp(x.file, file) == 0) {
        g = &x;
        break;
      }
      continue;
    }
    if (x.mask == mask) {
      g = &x;
      break;
    }
    // Groups with overlapping masks may be pending at once, at different calls: lanes 0-15 shuffle
    // among themselves while lanes 16-31 already wait for the whole warp at a later call. What is
    // wrong is one call reached with two different masks, e.g. __syncwarp(lane < 16 ? m1 : m2),
    // while the waiting group names this lane.
    if ((x.mask & (1u << lane)) && x.line == line && x.file && file && std::strcmp(x.file, file) == 0) {
      unsigned other = __builtin_ctz(x.arrived);
      thread_fault(w, t, Kind::warp_misuse,
                   strf("warp misuse at %s: %s: lane %u calls %s with mask 0x%08x while lane %u of the same warp waits in %s at %s "
                        "with mask 0x%08x.\n  Lanes that meet in a *_sync call must all pass the same mask.",
                        at().c_str(), who(w, t).c_str(), lane, op_name(op), mask, other, op_name(x.op), where(x.file, x.line).c_str(),
                        x.mask),
                   at());
    }
  }
  if (g && g->op != op) {
    unsigned other = __builtin_ctz(g->arrived);
    thread_fault(w, t, Kind::warp_misuse,
                 strf("warp misuse at %s: %s: lane %u calls %s while lane %u waits in %s at %s with the same mask 0x%08x.\n"
                      "  The lanes of a mask must all call the same intrinsic; the others took a different branch.",
                      at().c_str(), who(w, t).c_str(), lane, op_name(op), other, op_name(g->op), where(g->file, g->line).c_str(), mask),
                 at());
  }
  if (!g) {
    wp.groups.push_back(WarpGroup{op, mask, 0, width, value_bytes, is_signed, file, line, {}, {}});
    g = &wp.groups.back();
  }
  g->value[lane] = value;
  g->param[lane] = param;
  g->arrived |= 1u << lane;
  if (group_complete(wp, *g)) {
    complete_group(w, warp_index, *g);
    uint64_t r = t.warp_result;
    wp.groups.erase(wp.groups.begin() + (g - wp.groups.data()));
    return r;
  }
  t.st = St::AtWarp;
  t.ready = kNotReady;
  t.wait_file = file;
  t.wait_line = line;
  t.wait_what = op_name(op);
  t.wait_mask = mask;
  ++w.at_warp;
  switch_away(w, t);
  return t.warp_result;
}

// ---- cuda::barrier<thread_scope_block> -------------------------------------------------------

static constexpr uint32_t kCBarMagic = 0xB4A21E55u;

static void check_cbar(Worker& w, Thread& t, CBarState* b, const char* what, const char* file, int line) {
  if (b->magic != kCBarMagic)
    thread_fault(w, t, Kind::cuda_barrier_misuse,
                 strf("cuda::barrier misuse at %s: %s: %s on a barrier that was never initialised.\n"
                      "  Call init(&bar, count) once (e.g. from thread 0), then __syncthreads(), before any thread uses it.",
                      where(file, line).c_str(), who(w, t).c_str(), what));
}

void cbar_init(CBarState* b, long expected, const char* file, int line) {
  Worker* w = tl_worker;
  if (!w || !tl_thread) device_misuse("init(cuda::barrier*)", file, line);
  if (expected <= 0 || expected > 1024)
    thread_fault(*w, self_thread(), Kind::cuda_barrier_misuse,
                 strf("cuda::barrier misuse at %s: %s: init() with an expected count of %ld; a block barrier counts between 1 "
                      "and 1024 threads.", where(file, line).c_str(), who(*w, self_thread()).c_str(), expected));
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
                      b->pending == 1 ? "" : "s", b->expected, where(b->init_file, b->init_line).c_str()));
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
                                       where(file, line).c_str(), who(w, t).c_str()));
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

// ---- static shared memory ----------------------------------------------------------------------
// Each worker has an arena whose top touches an inaccessible page. The block's `__shared__`
// arrays are placed downwards from the top in the order threads first reach their declarations,
// with canary bytes between them: reading past the first array faults at once, and writes past
// any array are found when the block ends.

static constexpr size_t kSharedLimit = 48 * 1024;
static constexpr size_t kSharedArena = 64 * 1024;
static constexpr unsigned char kSharedCanary = 0xA5;

// What uninitialized shared memory holds differs per thread schedule, so that a result that
// depends on garbage is not hidden by a lucky fill: 0xCD bytes (-4.3e8 as a float, -842150451 as
// an int) in the first schedule, 0x7F bytes (3.4e38, 2139062143) in the second, random bytes in
// the third.
static void fill_garbage(Worker& w, unsigned char* p, size_t n) {
  int s = w.grid ? w.grid->schedule_index : 0;
  if (s == 0) std::memset(p, 0xCD, n);
  else if (s == 1) std::memset(p, 0x7F, n);
  else
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(splitmix(w.rng) >> 56);
}

void* static_shared_raw(size_t bytes, size_t align, size_t elem, const char* name, const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse("a __shared__ variable", file, line);
  Worker& w = *wk;
  // One declaration is one variable per block; the size tells apart the instantiations of a
  // template (block_sum<32> and block_sum<64> declare different arrays at the same line).
  for (const SharedArray& a : w.shared_arrays)
    if (a.line == line && a.name == name && a.file == file && a.bytes == bytes) return a.p;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!w.sh_guard) {
    void* m = mmap(nullptr, kSharedArena + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) fatal(Diagnosis{Kind::out_of_memory}, "the simulator could not allocate shared memory (out of memory)");
    w.sh_guard = static_cast<unsigned char*>(m) + kSharedArena;
    mprotect(w.sh_guard, page, PROT_NONE);
    w.sh_lo = reinterpret_cast<uintptr_t>(m);
    w.sh_len = kSharedArena;
  }
  align = std::max<size_t>(align, 16);
  unsigned char* top = w.shared_arrays.empty() ? w.sh_guard : static_cast<unsigned char*>(w.shared_arrays.back().p) - 16;
  uintptr_t start = (reinterpret_cast<uintptr_t>(top) - std::max<size_t>(bytes, 1)) & ~uintptr_t(align - 1);
  size_t used = size_t(w.sh_guard - reinterpret_cast<unsigned char*>(start));
  // The limit applies to what the variables need, as on the GPU, not to the arena's canary gaps
  // and 16-byte alignment: two 24 KiB arrays fit.
  size_t declared = bytes;
  for (const SharedArray& a : w.shared_arrays) declared += a.bytes;
  if (declared + w.grid->shmem > kSharedLimit)
    thread_fault(w, self_thread(), Kind::shared_memory_limit,
                 strf("%s: the block needs more than 49152 bytes (48 KiB) of shared memory (%zu bytes of __shared__ variables "
                      "so far, %zu dynamic). The last one: %s (%zu bytes) at %s.",
                      kernel_str(w.grid->site).c_str(), declared, w.grid->shmem, name, bytes, where(file, line).c_str()));
  if (used > kSharedArena)
    thread_fault(w, self_thread(), Kind::shared_arena_full,
                 strf("%s: %zu __shared__ variables do not fit the simulator's shared-memory arena (each takes at least 32 "
                      "bytes there). The last one: %s at %s.",
                      kernel_str(w.grid->site).c_str(), w.shared_arrays.size() + 1, name, where(file, line).c_str()));
  unsigned char* p = reinterpret_cast<unsigned char*>(start);
  std::memset(p - 16, kSharedCanary, 16);                   // below: the gap to the next array
  fill_garbage(w, p, bytes);                                // garbage at the start, as on the GPU
  std::memset(p + bytes, kSharedCanary, size_t(top - p) - bytes);  // above: slack and gap
  w.shared_arrays.push_back(SharedArray{p, bytes, elem, name, file, line});
  return p;
}

// "" when every canary of the arena is intact; else which array was overrun.
static std::string static_shared_overrun(const Worker& w) {
  for (size_t i = 0; i < w.shared_arrays.size(); ++i) {
    const SharedArray& a = w.shared_arrays[i];
    const unsigned char* p = static_cast<const unsigned char*>(a.p);
    const unsigned char* above = i == 0 ? w.sh_guard : static_cast<const unsigned char*>(w.shared_arrays[i - 1].p);
    for (const unsigned char* q = p + a.bytes; q < above; ++q)
      if (*q != kSharedCanary)
        return strf("a thread wrote past the end of __shared__ %s (%zu bytes, declared at %s)", a.name, a.bytes,
                    where(a.file, a.line).c_str());
    if (i + 1 == w.shared_arrays.size())
      for (const unsigned char* q = p - 16; q < p; ++q)
        if (*q != kSharedCanary)
          return strf("a thread wrote before the start of __shared__ %s (declared at %s)", a.name, where(a.file, a.line).c_str());
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The block scheduler
// ---------------------------------------------------------------------------------------------

// Each fiber's stack begins (at its top) at a different offset modulo kColorSpan, 512 bytes
// apart. Stacks of equal size are otherwise aligned alike, so the few lines each fiber touches
// at every switch (the frames of the kernel, __syncthreads() and the switch) would all fall
// into the same cache sets: with 256 fibers, more than the ways of the L1 and L2 caches
// (cachegrind's model of this machine's caches: 12x fewer L2 misses on the p14 scan).
static constexpr size_t kColorSpan = 64 * 1024;
static constexpr size_t kColorStep = 512;

// Usable bytes of every fiber's stack: the requested size, whole pages, plus the colouring slack.
static size_t stack_span() {
  static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (options().stack_bytes + page - 1) / page * page + kColorSpan;
}

static void ensure_stacks(Worker& w, size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t sz = stack_span();
  while (w.stacks.size() < n) {
    void* m = mmap(nullptr, sz + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) fatal(Diagnosis{Kind::out_of_memory}, "the simulator could not allocate a thread stack (out of memory)");
    mprotect(m, page, PROT_NONE);  // a stack overflow faults here instead of corrupting a neighbour
    w.stacks.push_back(static_cast<char*>(m) + page);
  }
}

// The top of stack slot i: the highest address of its span whose offset modulo kColorSpan is the
// slot's colour. At least stack_bytes lie below it.
static uintptr_t stack_top(uintptr_t lo, size_t span, unsigned i) {
  uintptr_t want = (kColorSpan - (i % (kColorSpan / kColorStep)) * kColorStep) & (kColorSpan - 1);
  uintptr_t top = lo + span;
  return top - ((top - want) & (kColorSpan - 1));
}

// Where each thread of a block of shape `bd` stands: its index, threadIdx, lane, stack, and the
// sweep order of the schedule. Computed again only when the shape (or the schedule) changes.
static void layout_threads(Worker& w, dim3 bd, unsigned n, Schedule schedule) {
  if (w.layout_base == w.threads.data() && w.layout_bd.x == bd.x && w.layout_bd.y == bd.y && w.layout_bd.z == bd.z &&
      w.layout_schedule == schedule)
    return;
  size_t span = stack_span();
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    t.view.tid = uint3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
    t.view.lane = i % 32;
    t.linear = i;
    t.stack_lo = reinterpret_cast<uintptr_t>(w.stacks[i]);
    t.stack_top = stack_top(t.stack_lo, span, i);
  }
  w.order.resize(n);
  for (unsigned i = 0; i < n; ++i) w.order[i] = &w.threads[schedule == Schedule::Reverse ? n - 1 - i : i];
  link_order(w, n);
  w.layout_base = w.threads.data();
  w.layout_bd = bd;
  w.layout_schedule = schedule;
  w.stack_bytes = span;
}

static std::string list_waiters(Worker& w, unsigned n, St st) {
  // Groups threads by where they wait: "threads 0-3 wait at __syncthreads() at f:12".
  std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    if (t.st != st) continue;
    std::string key = std::string(t.wait_what ? t.wait_what : "?");
    if (st == St::AtWarp) key += strf(" (mask 0x%08x)", t.wait_mask);
    key += " at " + where(t.wait_file, t.wait_line);
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {i}});
    else it->second.push_back(i);
  }
  std::string out;
  for (auto& g : groups) {
    bool many = g.second.size() > 1;
    out += strf("    thread%s %s wait%s in %s\n", many ? "s" : "", ranges(g.second).c_str(), many ? "" : "s", g.first.c_str());
  }
  return out;
}

static std::string list_exited(Worker& w, unsigned n) {
  std::vector<unsigned> ids;
  for (unsigned i = 0; i < n; ++i)
    if (w.threads[i].st == St::Exited) ids.push_back(i);
  if (ids.empty()) return "";
  return strf("    thread%s %s %s returned\n", ids.size() > 1 ? "s" : "", ranges(ids).c_str(), ids.size() > 1 ? "have" : "has");
}

// Dynamic shared memory ends where an inaccessible page begins, so reading or writing past the
// bytes the launch asked for faults at once (alignment slack aside: canaries there, and in front,
// are checked when the block ends).
static constexpr size_t kDynSharedMax = 48 * 1024;
static constexpr size_t kDynSharedFront = 64;
static unsigned char* place_dynamic_shared(Worker& w, size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!w.dyn_guard) {
    size_t len = (kDynSharedMax + 16 + kDynSharedFront + page - 1) / page * page + page;
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) fatal(Diagnosis{Kind::out_of_memory}, "the simulator could not allocate shared memory (out of memory)");
    w.dyn_guard = static_cast<unsigned char*>(m) + len - page;
    mprotect(w.dyn_guard, page, PROT_NONE);
    w.dyn_lo = reinterpret_cast<uintptr_t>(m);
    w.dyn_len = len - page;
  }
  size_t padded = (std::max<size_t>(bytes, 1) + 15) & ~size_t(15);
  unsigned char* start = w.dyn_guard - padded;
  std::memset(start - kDynSharedFront, kSharedCanary, kDynSharedFront);
  fill_garbage(w, start, bytes);  // garbage at the start, as on the GPU
  std::memset(start + bytes, kSharedCanary, padded - bytes);
  w.dyn_start = start;
  w.dyn_bytes = bytes;
  w.dyn_name = nullptr;
  w.dyn_elem = 0;
  return start;
}

unsigned char* dynamic_shared(const char* name, size_t elem) {
  Worker* w = tl_worker;
  if (!w || !tl_thread) device_misuse("dynamic shared memory", nullptr, 0);
  if (!w->dyn_name) {
    w->dyn_name = name;
    w->dyn_elem = elem;
  }
  return w->block.dyn_shared;
}

static std::string dynamic_shared_overrun(const Worker& w) {
  const unsigned char* s = w.dyn_start;
  for (size_t i = 0; i < kDynSharedFront; ++i)
    if (s[-1 - (long)i] != kSharedCanary)
      return strf("a thread wrote to byte -%zu, before the start of the %zu bytes of dynamic shared memory", i + 1, w.dyn_bytes);
  for (const unsigned char* p = s + w.dyn_bytes; p < w.dyn_guard; ++p)
    if (*p != kSharedCanary)
      return strf("a thread wrote at byte %zu of dynamic shared memory, but the launch asked for %zu bytes", size_t(p - s),
                  w.dyn_bytes);
  return "";
}

// Runs one block to completion (or to its first error) under the grid's schedule.
static void run_block(Worker& w, Grid& g, uint32_t linear) {
  const dim3 gd = g.grid, bd = g.block;
  unsigned n = bd.x * bd.y * bd.z;
  w.checking = g.checking;
  w.observed = g.observed;
  w.rng = g.seed ^ (uint64_t(linear) * 0x9E3779B97F4A7C15ull) ^ 0x5DEECE66Dull;
  w.block.bid = uint3{linear % gd.x, (linear / gd.x) % gd.y, linear / (gd.x * gd.y)};
  w.block.bdim = bd;
  w.block.gdim = gd;
  w.block_linear = linear;
  w.block.dyn_shared = place_dynamic_shared(w, g.shmem);
  w.shared_arrays.clear();
  tl_block = &w.block;
  tl_block_view = w.block;

  if (w.threads.size() < n) w.threads.resize(n);
  ensure_stacks(w, n);
  layout_threads(w, bd, n, g.schedule);
  unsigned nwarps = (n + 31) / 32;
  w.warps.resize(nwarps);
  for (unsigned k = 0; k < nwarps; ++k) {
    unsigned lanes = std::min(32u, n - k * 32);
    w.warps[k].live = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
    w.warps[k].groups.clear();
  }
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    t.st = St::Runnable;
    t.ready = 0;
    t.wait_file = nullptr;
    t.bars_at_exit = 0;
    t.clock_reads = 0;
    t.am_file = nullptr;
    fiber_make(t.fiber, reinterpret_cast<void*>(t.stack_lo), t.stack_top - t.stack_lo, thread_entry, &t);
  }
  w.bar_sites.clear();
  w.epoch_file = nullptr;
  w.epoch_line = 0;
  Observers::block_begin(w, n);
  bump(w.threads_run, n);
  w.hot_count.store(0, std::memory_order_relaxed);
  w.block_start_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(),
                         std::memory_order_relaxed);

  std::vector<Thread*>& order = w.order;
  // The random schedule shuffles the order of the previous sweep: each block starts from thread order.
  if (g.schedule == Schedule::Random)
    for (unsigned i = 0; i < n; ++i) order[i] = &w.threads[i];
  uint64_t rng = g.seed ^ (uint64_t(linear) * 0x9E3779B97F4A7C15ull);
  // Formatted on error paths only.
  auto ksite = [&] { return kernel_str(g.site); };
  auto blk = [&] { return dim_str(w.block.bid, gd); };

  w.exited = 0;
  w.bar_epoch = 0;
  w.sweep_n = n;
  for (;;) {
    // One barrier interval: sweep the threads in schedule order. Each thread that blocks switches
    // straight to the next one; the last switches back here. Sweep again only if a warp
    // collective woke threads that the sweep had already passed.
    w.bar_arrived = 0;
    w.bar_mismatch = false;
    w.bar_kind = -1;
    w.bar_count = 0;
    w.bar_all = 1;
    w.bar_any = 0;
    w.at_warp = 0;
    w.at_cbar = 0;
    do {
      w.woke = false;
      if (g.schedule == Schedule::Random) {
        for (unsigned i = n; i > 1; --i) std::swap(order[i - 1], order[splitmix(rng) % i]);
        link_order(w, n);
      }
      if (Thread* first = next_in_sweep(w, order[0])) {
        enter(w, *first);
        fiber_switch(w.sched, first->fiber);
        tl_thread = nullptr;
      }
      if (g.abort.load(std::memory_order_relaxed)) return;
      if (!w.woke) {
        // Every lane that could run has blocked: the lanes waiting in an __activemask() call are
        // the ones that reached it together. Give them their mask and sweep again.
        for (unsigned k = 0; k < nwarps; ++k)
          for (size_t gi = 0; gi < w.warps[k].groups.size();) {
            if (w.warps[k].groups[gi].op == WarpOp::Activemask) {
              complete_group(w, k, w.warps[k].groups[gi]);
              w.warps[k].groups.erase(w.warps[k].groups.begin() + gi);
            } else {
              ++gi;
            }
          }
      }
    } while (w.woke);
    const unsigned exited = w.exited;
    if (exited == n) {
      std::string overrun = dynamic_shared_overrun(w);
      const char* hint = "The third <<<>>> argument sets how many bytes `extern __shared__` arrays have: make it cover every "
                         "index the kernel uses.";
      if (overrun.empty()) {
        overrun = static_shared_overrun(w);
        hint = "Check every shared-memory index against the array's size.";
      }
      if (!overrun.empty())
        g.fail(block_diagnosis(Kind::out_of_bounds, w), strf("out-of-bounds write to shared memory in %s, block %s: %s.\n  %s", ksite().c_str(),
                                        blk().c_str(), overrun.c_str(), hint));
      Observers::block_end(w);
      return;
    }
    if (w.at_cbar > 0) {
      std::string need;
      for (unsigned i = 0; i < n; ++i) {
        const Thread& t = w.threads[i];
        if (t.st == St::AtCBar) {
          need = strf("  The barrier (initialised at %s for %d arrivals) still misses %d arrival%s in phase %llu: every thread it "
                      "counts must call arrive() (or arrive_and_wait()) once per phase.\n",
                      where(t.cbar->init_file, t.cbar->init_line).c_str(), t.cbar->expected, t.cbar->pending,
                      t.cbar->pending == 1 ? "" : "s", (unsigned long long)t.cbar_token);
          break;
        }
      }
      g.fail(block_diagnosis(Kind::deadlock, w),
             strf("deadlock in %s, block %s: threads wait on a cuda::barrier phase that can never complete.\n%s%s%s%s",
                  ksite().c_str(), blk().c_str(), list_waiters(w, n, St::AtCBar).c_str(), list_waiters(w, n, St::AtBarrier).c_str(),
                  list_exited(w, n).c_str(), need.c_str()));
      return;
    }
    if (w.at_warp > 0) {
      bool mixed = w.bar_arrived > 0;
      // A mask that came from __activemask() in divergent code names only the lanes of one side.
      std::string am;
      for (unsigned i = 0; i < n && am.empty(); ++i) {
        const Thread& t = w.threads[i];
        if (t.st == St::AtWarp && t.am_file && t.wait_mask == t.am_mask)
          am = strf("  The mask 0x%08x of thread %u came from __activemask() at %s, which returns only the lanes that reached "
                    "that call together: in divergent code, the lanes of the other branch are not in it. Use a mask the whole "
                    "warp agrees on, such as 0xffffffff or __ballot_sync(0xffffffff, cond) taken before the branch.\n",
                    t.am_mask, i, where(t.am_file, t.am_line).c_str());
      }
      g.fail(block_diagnosis(mixed ? Kind::barrier_divergence : Kind::deadlock, w),
             strf("%s %s: block %s cannot make progress: lanes wait in a warp *_sync call for lanes that never arrive.\n%s%s%s%s"
                  "  Every non-exited lane named in a mask must reach the same *_sync call. A lane that took the other side of an "
                  "if, or waits at __syncthreads(), never arrives.",
                  mixed ? "barrier divergence in" : "deadlock in", ksite().c_str(), blk().c_str(), list_waiters(w, n, St::AtWarp).c_str(),
                  list_waiters(w, n, St::AtBarrier).c_str(), list_exited(w, n).c_str(), am.c_str()));
      return;
    }
    // Everyone left is at a barrier (CUDA counts only threads that have not exited): release
    // them if they all wait at the same one.
    if (w.bar_mismatch) {
      g.fail(block_diagnosis(Kind::barrier_divergence, w),
             strf("barrier divergence in %s, block %s: threads wait at different barriers.\n%s%s"
                  "  Every thread of a block must reach the same __syncthreads() call. Move the barrier out of the if/else, or "
                  "make the condition the same for the whole block.",
                  ksite().c_str(), blk().c_str(), list_waiters(w, n, St::AtBarrier).c_str(), list_exited(w, n).c_str()));
      return;
    }
    // Strict barriers: a thread that returned while the others pass another barrier is divergence
    // (CUDA leaves it undefined), and a barrier passed without end is a loop that never ends.
    Observers::barrier(w, w.bar_file, w.bar_line);
    BarrierProblem problem;
    if (check_barrier_release(w, n, w.bar_file, w.bar_line, &problem)) {
      const Diagnosis d = block_diagnosis(problem.kind, w, nullptr, where(w.bar_file, w.bar_line));
      if (problem.kind == Kind::barrier_divergence)
        g.fail(d,
               strf("barrier divergence in %s, block %s: some threads returned while the others went on to pass %s.\n%s"
                    "  Every thread of a block must reach every __syncthreads() the others reach: a thread that returns early "
                    "(e.g. `if (i >= n) return;`) or skips a barrier inside an if is undefined behaviour in CUDA. Keep the "
                    "threads alive and guard only their loads and stores.",
                    ksite().c_str(), blk().c_str(), ("the barrier at " + where(w.bar_file, w.bar_line)).c_str(),
                    problem.text.c_str()));
      else
        g.fail(d, strf("runaway block in %s: %s", ksite().c_str(), problem.text.c_str()));
      return;
    }
    w.bar_result = w.bar_kind == 0 ? w.bar_count : w.bar_kind == 1 ? w.bar_all : w.bar_kind == 2 ? w.bar_any : 0;
    ++w.bar_epoch;
  }
}

// ---------------------------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------------------------

namespace {
struct Pool {
  std::mutex mu;
  std::condition_variable cv_work, cv_done;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  Grid* grid = nullptr;
  uint64_t generation = 0;
  int busy = 0;
};
Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers outlive static destruction
  return *p;
}
}  // namespace

std::vector<Worker*> all_workers() {
  std::vector<Worker*> v;
  for (auto& w : pool().workers) v.push_back(w.get());
  return v;
}

static void worker_loop(Worker* w) {
  Pool& p = pool();
  tl_worker = w;
  install_crash_handlers();  // per-thread alternate signal stack
  uint64_t seen = 0;
  for (;;) {
    Grid* g;
    {
      std::unique_lock<std::mutex> lock(p.mu);
      p.cv_work.wait(lock, [&] { return p.generation != seen; });
      seen = p.generation;
      g = p.grid;
    }
    w->grid = g;
    // An observed grid (checked or profiled) runs on one worker: the observers' state is not shared
    // between threads, and what they find does not depend on the number of cores.
    for (;;) {
      if (g->observed && w->index != 0) break;
      if (g->abort.load()) break;
      size_t i = g->next.fetch_add(1);
      if (i >= g->order.size()) break;
      run_block(*w, *g, g->order[i]);
      w->current.store(nullptr, std::memory_order_relaxed);  // the watchdog watches running threads only
      w->block_start_ns.store(0, std::memory_order_relaxed);
    }
    tl_block = nullptr;
    {
      std::lock_guard<std::mutex> lock(p.mu);
      if (--p.busy == 0) p.cv_done.notify_all();
    }
  }
}

void worker_threads_init() {
  Pool& p = pool();
  if (!p.workers.empty()) return;
  int n = options().workers;
  if (n <= 0) n = (int)std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < n; ++i) {
    p.workers.emplace_back(new Worker());
    p.workers.back()->index = i;
  }
  for (int i = 0; i < n; ++i) {
    p.threads.emplace_back(worker_loop, p.workers[i].get());
    p.threads.back().detach();
  }
  watchdog_start();
}

void run_grid(Grid& g) {
  Pool& p = pool();
  worker_threads_init();
  size_t blocks = size_t(g.grid.x) * g.grid.y * g.grid.z;
  g.order.resize(blocks);
  for (size_t i = 0; i < blocks; ++i) g.order[i] = uint32_t(g.schedule == Schedule::Reverse ? blocks - 1 - i : i);
  if (g.schedule == Schedule::Random) {
    uint64_t s = g.seed;
    for (size_t i = blocks; i > 1; --i) std::swap(g.order[i - 1], g.order[splitmix(s) % i]);
  }
  std::unique_lock<std::mutex> lock(p.mu);
  p.grid = &g;
  p.busy = (int)p.workers.size();
  ++p.generation;
  p.cv_work.notify_all();
  p.cv_done.wait(lock, [&] { return p.busy == 0; });
  p.grid = nullptr;
}

}  // namespace detail
}  // namespace cudasim

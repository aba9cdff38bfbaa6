// The scheduler's inline core, shared by the files whose calls block or wake a simulated thread
// (scheduler.cpp, warps.cpp, cuda_barrier.cpp): inline here so that every caller keeps it inlined.
#pragma once

#include "private.h"

#include <cstdint>
#include <string>

#include "internal.h"

namespace cudasim {
namespace detail {

// Counters written by one worker only: a relaxed load and store, no locked instruction.
static inline void bump(std::atomic<uint64_t>& c, uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

static inline uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline Thread& self_thread() { return *reinterpret_cast<Thread*>(tl_thread); }

// Thread::ready for a thread that only a warp collective, a cuda::barrier phase or nothing (it
// has returned or faulted) can make runnable again.
static constexpr uint32_t kNotReady = UINT32_MAX;
// The first thread from `t` on (t, t->next, ...) that can run: runnable, or waiting at a barrier
// that has since been released (an earlier epoch). The list of a sweep ends at the worker's idle
// thread, which is always "ready" and links to itself, and whose context is the scheduler's: the
// sweep is over when it comes next, and switching to it goes back to the scheduler, with no test.
static inline Thread* next_in_sweep(Worker& w, Thread* t) {
  const uint32_t epoch = w.bar_epoch;
  while (t->ready > epoch) t = t->next;
  // Most threads of a sweep run: bring in the stack of the one after `t` (whose bookkeeping an
  // earlier call prefetched; for a thread that has not started, a line of the worker's, see
  // fiber_unmade) and the bookkeeping of the one after that.
  Thread* after = t->next;
  fiber_prefetch(after->fiber);
  __builtin_prefetch(after->next);
  return t;
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

// Gives a thread that has not started (Thread::fresh) a free stack and a fiber that starts it.
void start_thread(Worker& w, Thread& t);
// The running thread `t` has blocked and the next thread of the sweep has not started: starts it
// and switches to it. Out of line, so that switch_away's common path stays free of calls.
__attribute__((noinline)) void switch_to_fresh(Worker& w, Thread& t, Thread& next);

// The running thread `t` has blocked (its state says where): continue with the next thread of the
// sweep directly, or go back to the scheduler (the idle thread) when the sweep is over or the
// grid stops. Returns when some thread switches back to `t`. Inlined: at a barrier it is most of
// what a thread does.
static inline __attribute__((always_inline)) void switch_away(Worker& w, Thread& t) {
  Thread* next = __builtin_expect(w.grid->abort.load(std::memory_order_relaxed), 0) ? &w.idle : next_in_sweep(w, t.next);
  if (__builtin_expect(next->fresh, 0)) return switch_to_fresh(w, t, *next);
  enter(w, *next);
  fiber_switch(t.fiber, next->fiber);
}

// Polling. A run with Grid::spin_watch set runs its blocks one after another on one worker, so a
// thread that waits for another block's write waits for a block that has finished (the value is
// there) or for one that has not started (it never comes, here or on a GPU that does not run the
// two blocks side by side). The access front end calls watch_spin for every access of such a run
// outside the thread's stack: a thread that reads one or two words of global memory again and
// again (plain, volatile or atomic reads; an atomic that does not change the word reads it too),
// kSpinPolls times in a row without a plain write or a barrier, is reported by spin_limit. Counting
// reads, not time, makes the verdict the same on every machine and for every CUDASIM_WORKERS.
static constexpr uint32_t kSpinPolls = 1u << 14;
[[noreturn]] void spin_limit(Worker& w, Thread& t, void* ra);
// Interleaved runs (Grid::interleave, workers.cpp): a thread that has read the same word
// kYieldPolls times in a row gives the OS thread to another block, as a GPU runs the block it
// waits for beside it; the polls it counts towards kSpinPolls start again if some block passed a
// barrier or finished meanwhile. A poll loop that gives up sooner than kYieldPolls reads sees no
// other block run in between, which is what exposes it.
static constexpr uint32_t kYieldPolls = 64;
void interleave_poll_yield(Worker& w, Thread& t);
static inline void watch_spin(Worker& w, Thread& t, uintptr_t a, bool write, bool atomic, void* ra) {
  if (write && !atomic) {
    t.spin_polls = 0;
    return;
  }
  if (a - w.sh_lo < w.sh_len || a - w.dyn_lo < w.dyn_len) return;  // shared memory: the block's own
  if (t.spin_epoch != w.bar_epoch) {
    t.spin_epoch = w.bar_epoch;
    t.spin_polls = 0;
  }
  a &= ~uintptr_t(3);  // the word
  if (a == t.spin_addr[0] || a == t.spin_addr[1]) {
    if (__builtin_expect(++t.spin_polls >= kSpinPolls, 0)) spin_limit(w, t, ra);
    if (__builtin_expect(w.il != nullptr, 0) && t.spin_polls % kYieldPolls == 0) interleave_poll_yield(w, t);
  } else {
    t.spin_addr[1] = t.spin_addr[0];
    t.spin_addr[0] = a;
    t.spin_polls = 0;
  }
}

// The diagnosis of an error in one block (the thread of the running block, when given): `facts`,
// then the launch's (launch_facts).
Diagnosis block_diagnosis(Kind kind, const Worker& w, const Thread* t = nullptr, const std::string& site = "",
                          Facts facts = Facts());

// Records an error found by the running thread and parks it for good. `facts`: what the message
// states beyond the block, thread, site and launch (diagnosis.h).
[[noreturn]] void thread_fault(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site = "",
                               const std::string& detail = "", const Facts& facts = Facts());

// "block b, thread t" of a thread of the running block, for messages.
std::string who(const Worker& w, const Thread& t);

// Runs one block to completion (or to its first error) under the grid's schedule (scheduler.cpp).
void run_block(Worker& w, Grid& g, uint32_t linear);

// Interleaved runs (workers.cpp): the running block passed a barrier and gives the OS thread to
// the next block to take a turn; and, for an endless wait, what ran beside the waiting block.
void interleave_turn(Worker& w);
std::string interleave_state(const Worker& w);
void interleave_facts(const Worker& w, Facts& f);  // interleave_state as facts of a diagnosis

// Warp collectives (warps.cpp): whether every live lane of the group's mask has arrived, and
// completing the group.
void complete_group(Worker& w, unsigned warp_index, WarpGroup& g);
inline bool group_complete(const Warp& wp, const WarpGroup& g) {
  unsigned need = g.mask & wp.live;
  return (g.arrived & need) == need;
}

// Shared memory (shared_memory.cpp): placing dynamic shared memory for a block, and the checks
// of the canaries when it ends ("" when intact).
unsigned char* place_dynamic_shared(Worker& w, size_t bytes);
std::string static_shared_overrun(const Worker& w);
std::string dynamic_shared_overrun(const Worker& w);

}  // namespace detail
}  // namespace cudasim

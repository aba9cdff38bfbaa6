// The block scheduler: a block's threads are fibers swept in schedule order inside each barrier
// interval, __syncthreads() their meeting point; the hot path (enter, switch_away) is in scheduler.h.
#include <sys/mman.h>
#include <unistd.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>

#include "scheduler.h"
#include "events.h"

namespace cudasim {
namespace detail {

__thread Worker* tl_worker = nullptr;
__thread ThreadView* tl_thread = nullptr;
__thread BlockView* tl_block = nullptr;
__thread ThreadView tl_thread_view = {};
__thread BlockView tl_block_view = {};

// Links the threads of order[0..n) into the sweep list, ending at the worker's idle thread.
static void link_order(Worker& w, unsigned n) {
  for (unsigned i = 0; i + 1 < n; ++i) w.order[i]->next = w.order[i + 1];
  w.order[n - 1]->next = &w.idle;
  w.idle.next = &w.idle;
  w.idle.ready = 0;
}

// The diagnosis of an error in one block (the thread of the running block, when given).
Diagnosis block_diagnosis(Kind kind, const Worker& w, const Thread* t, const std::string& site, Facts facts) {
  Diagnosis d;
  d.kind = kind;
  if (!site.empty()) d.sites.push_back(site);
  d.has_block = true;
  d.block = w.block.bid;
  if (t) d.threads.push_back(t->view.tid);
  d.facts = std::move(facts);
  if (w.grid) launch_facts(d.facts, *w.grid);
  return d;
}

// Records an error found by the running thread and parks it for good.
[[noreturn]] void thread_fault(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site,
                               const std::string& detail, const Facts& facts) {
  Diagnosis d = block_diagnosis(kind, w, &t, site, facts);
  d.detail = detail;
  w.grid->fail(d, msg);
  t.st = St::Faulted;
  t.ready = kNotReady;
  for (;;) fiber_switch(t.fiber, w.idle.fiber);
}

void thread_fault_ext(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site, const std::string& detail,
                      const Facts& facts) {
  thread_fault(w, t, kind, msg, site, detail, facts);
}

std::string who(const Worker& w, const Thread& t) {
  return strf("block %s, thread %s", dim_str(w.block.bid, w.block.gdim).c_str(),
              dim_str(t.view.tid, w.block.bdim).c_str());
}

// A thread starts with the block's view of it as it was before it ran: what the previous block's
// thread in the same slot left behind is reset here, when the thread first runs, rather than for
// every thread when the block begins.
static inline void reset_thread(Thread& t) {
  t.fresh = false;
  t.wait_file = nullptr;
  t.wait_own = kNotReady;
  t.bars_at_exit = 0;
  t.clock_reads = 0;
  t.am_file = nullptr;
  t.spin_addr[0] = t.spin_addr[1] = 0;
  t.spin_polls = 0;
  t.spin_epoch = 0;
}

// A fiber runs the kernel for one thread and, when that thread returns and the next thread of the
// sweep has not started, for that one too, on the same stack: a kernel without barriers runs all
// of a block's threads on one stack that stays in the cache, one call after another, with no
// switch and no new fiber.
static void thread_entry(void* arg) {
  Thread* tp = static_cast<Thread*>(arg);
  Worker& w = *tl_worker;
  for (;;) {
    Thread& t = *tp;
    try {
      w.grid->invoke(w.grid->args);
    } catch (const std::exception& e) {
      // "exception": what() of the exception, the program's own text.
      thread_fault(w, t, Kind::exception, strf("%s: a C++ exception escaped the kernel in %s: %s", kernel_str(w.grid->site).c_str(),
                                           who(w, t).c_str(), e.what()),
                   "", "", Facts().set("case", "std").set("exception", e.what()));
    } catch (...) {
      thread_fault(w, t, Kind::exception, strf("%s: an exception escaped the kernel in %s", kernel_str(w.grid->site).c_str(), who(w, t).c_str()),
                   "", "", Facts().set("case", "other"));
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
    Thread* next = w.grid->abort.load(std::memory_order_relaxed) ? &w.idle : next_in_sweep(w, t.next);
    if (next->fresh) {
      // Run it here: this stack is free now, and warm.
      reset_thread(*next);
      next->stack_lo = t.stack_lo;
      next->stack_slot = t.stack_slot;
      enter(w, *next);
      tp = next;
      continue;
    }
    // Nobody switches back to a thread that returned: its stack is free for a thread that starts later.
    w.stack_free.push_back(t.stack_slot);
    enter(w, *next);
    fiber_switch(t.fiber, next->fiber);
    __builtin_trap();
  }
}

void start_thread(Worker& w, Thread& t) {
  unsigned slot;
  if (!w.stack_free.empty()) {
    slot = w.stack_free.back();
    w.stack_free.pop_back();
  } else {
    slot = w.stack_next++;
  }
  reset_thread(t);
  t.stack_slot = slot;
  t.stack_lo = reinterpret_cast<uintptr_t>(w.stacks[slot]);
  fiber_make(t.fiber, w.stacks[slot], w.stack_tops[slot] - t.stack_lo, thread_entry, &t);
}

void switch_to_fresh(Worker& w, Thread& t, Thread& next) {
  start_thread(w, next);
  enter(w, next);
  fiber_switch(t.fiber, next.fiber);
}

void device_misuse(const char* what, const char* file, int line) {
  Diagnosis d{Kind::device_code_from_host};
  if (file) d.sites.push_back(where(file, line));
  d.detail = what;
  // "what": the code that was used, or for the callers that name no code, "case" says what they use.
  static const struct {
    const char* what;
    const char* c;
  } kPhrases[] = {{"a __shared__ variable", "shared_variable"},
                  {"dynamic shared memory", "dynamic_shared"},
                  {"tiled_partition(group, n) with n not a power of two from 1 to 32", "tile_size"}};
  const char* c = "code";
  for (const auto& p : kPhrases)
    if (std::strcmp(what, p.what) == 0) c = p.c;
  d.facts.set("case", c);
  if (std::strcmp(c, "code") == 0) d.facts.set("what", what);
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
  if (__builtin_expect(w.bar_arrived++ == 0, 0)) {
    w.bar_file = file;
    w.bar_line = line;
    w.bar_what = what;
    return true;
  }
  return w.bar_line == line && w.bar_what == what && w.bar_file == file;
}

// A thread at a barrier that is not the first arrival's by pointer records its own site
// (barrier_wait_site).
static inline void record_own_site(Thread& t, const char* what, const char* file, int line) {
  t.wait_file = file;
  t.wait_line = line;
  t.wait_what = what;
  t.wait_own = t.ready;
}

// A later arrival whose site differs from the first arrival's by pointer: the same file named
// by another copy of the string (a header's inline function in two files), or another barrier.
// Out of line, and it switches away itself, so that the common path of __syncthreads() makes
// no call and keeps its values in scratch registers (no saves and restores).
static __attribute__((noinline)) void arrive_elsewhere(Worker& w, Thread& t, const char* what, const char* file, int line) {
  record_own_site(t, what, file, line);
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
  if (!arrive_at_barrier(*w, t, names[kind], file, line)) {
    record_own_site(t, names[kind], file, line);
    if (w->bar_line != line || w->bar_what != names[kind] || std::strcmp(w->bar_file, file) != 0) w->bar_mismatch = true;
  }
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

// A thread of a spin-watched run (blocks one after another) polled global memory kSpinPolls times.
// Every block dispatched before its block has finished and none after it has started: what it
// waits for can only come from a block that has not started, or from no block at all.
void spin_limit(Worker& w, Thread& t, void* ra) {
  Grid& g = *w.grid;
  const size_t blocks = size_t(g.grid.x) * g.grid.y * g.grid.z;
  const size_t pos = std::min(blocks, size_t(g.next.load(std::memory_order_relaxed))) - 1;  // this block's place in the order
  // The user's line, as the checker names its sites: the innermost inlined frame outside the
  // simulator's headers (a poll through cuda::atomic_ref is inlined from them).
  Dl_info info;
  const uint32_t pc = dladdr(ra, &info) && info.dli_fbase ? uint32_t(uintptr_t(ra) - uintptr_t(info.dli_fbase)) : 0;
  std::string site = pc ? site_of(pc) : "";
  if (site.empty() || site == "?") site = code_line(ra);
  const std::string read_at = site.empty() ? std::string() : " at " + site;
  std::string state = w.il        ? interleave_state(w)
                      : blocks == 1 ? std::string("the launch's only block")
                                    : strf("block %zu of %zu to start in the '%s' order, with %zu block%s before it finished and %zu not started",
                                         pos + 1, blocks, schedule_name(g.schedule), pos, pos == 1 ? "" : "s", blocks - 1 - pos);
  // "state": "interleaved" (its facts: interleave_facts), "only" (the launch's only block) or "order":
  // the block's place in the dispatch order ("position" of "blocks", in "schedule"), those before it
  // finished ("finished") and the rest not started ("not_started").
  Facts f;
  f.set("case", "polls").set("polls", (long long)kSpinPolls).set("blocks", blocks);
  if (w.il) {
    f.set("state", "interleaved");
    interleave_facts(w, f);
  } else if (blocks == 1) {
    f.set("state", "only");
  } else {
    f.set("state", "order").set("position", pos + 1).set("schedule", schedule_name(g.schedule));
    f.set("finished", pos).set("not_started", blocks - 1 - pos);
  }
  thread_fault(w, t, Kind::endless_wait,
               strf("runaway block in %s: %s waits for ever: it read the same global memory%s %u times in a row without "
                    "writing or reaching a barrier. Its block is %s, so no block that is running can change what it "
                    "reads.\n"
                    "  A spin-wait on a flag or counter that a later block (or no block) writes? On a GPU blocks start in no "
                    "guaranteed order and a block keeps its place until it returns, so a block that waits for one that has "
                    "not started can wait for ever. Wait only for blocks that started before this one (take the tile from "
                    "an atomicAdd ticket, not from blockIdx), and check that every block writes what the others wait for, "
                    "the first one too.",
                    kernel_str(g.site).c_str(), who(w, t).c_str(), read_at.c_str(), kSpinPolls, state.c_str()),
               site, "", f);
}

long long device_clock() {
  Worker* w = tl_worker;
  if (!w || !tl_thread) return (long long)std::clock();  // host code: the C library's clock()
  // A count of the thread's own clock reads: the same under every thread order and worker count.
  return (long long)(++self_thread().clock_reads) * 1000;
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

static uintptr_t stack_top(uintptr_t lo, size_t span, unsigned i);
static void ensure_stacks(Worker& w, size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t sz = stack_span();
  while (w.stacks.size() < n) {
    void* m = mmap(nullptr, sz + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) out_of_memory("thread_stack", "the simulator could not allocate a thread stack (out of memory)");
    mprotect(m, page, PROT_NONE);  // a stack overflow faults here instead of corrupting a neighbour
    w.stacks.push_back(static_cast<char*>(m) + page);
    w.stack_tops.push_back(stack_top(reinterpret_cast<uintptr_t>(w.stacks.back()), sz, unsigned(w.stacks.size() - 1)));
  }
  w.stack_bytes = sz;
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
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    t.view.tid = uint3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
    t.view.lane = i % 32;
    t.linear = i;
  }
  w.order.resize(n);
  for (unsigned i = 0; i < n; ++i) w.order[i] = &w.threads[schedule == Schedule::Reverse ? n - 1 - i : i];
  link_order(w, n);
  w.layout_base = w.threads.data();
  w.layout_bd = bd;
  w.layout_schedule = schedule;
}

// The threads of the block in state `st`, grouped by where they wait (and by mask, in a warp call).
struct WaitGroup {
  std::string what, site;
  unsigned mask;
  std::vector<unsigned> ids;
};
static std::vector<WaitGroup> waiter_groups(Worker& w, unsigned n, St st) {
  std::vector<WaitGroup> groups;
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    if (t.st != st) continue;
    const WaitSite at = wait_site(w, t);
    const std::string what = at.what ? at.what : "?", site = where(at.file, at.line);
    const unsigned mask = st == St::AtWarp ? t.wait_mask : 0;
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.what == what && g.site == site && g.mask == mask; });
    if (it == groups.end()) groups.push_back({what, site, mask, {i}});
    else it->ids.push_back(i);
  }
  return groups;
}

// "threads 0-3 wait in __syncthreads() at f:12", a line per group.
static std::string list_waiters(Worker& w, unsigned n, St st) {
  std::string out;
  for (const WaitGroup& g : waiter_groups(w, n, st)) {
    bool many = g.ids.size() > 1;
    std::string key = g.what;
    if (st == St::AtWarp) key += strf(" (mask 0x%08x)", g.mask);
    out += strf("    thread%s %s wait%s in %s at %s\n", many ? "s" : "", ranges(g.ids).c_str(), many ? "" : "s", key.c_str(),
                g.site.c_str());
  }
  return out;
}

// The same groups as facts: [{"threads": [[0, 3]], "call": "__syncthreads()", "site": "f:12"}, ...],
// with "mask" for a warp call.
static std::string waiters_json(Worker& w, unsigned n, St st) {
  std::string out;
  for (const WaitGroup& g : waiter_groups(w, n, st)) {
    out += (out.empty() ? "{" : ", {") + std::string("\"threads\": ") + ranges_json(g.ids) + ", \"call\": " + json_quote(g.what) +
           ", \"site\": " + json_quote(g.site);
    if (st == St::AtWarp) out += strf(", \"mask\": %u", g.mask);
    out += "}";
  }
  return "[" + out + "]";
}

static std::vector<unsigned> exited_ids(Worker& w, unsigned n) {
  std::vector<unsigned> ids;
  for (unsigned i = 0; i < n; ++i)
    if (w.threads[i].st == St::Exited) ids.push_back(i);
  return ids;
}

static std::string list_exited(Worker& w, unsigned n) {
  std::vector<unsigned> ids = exited_ids(w, n);
  if (ids.empty()) return "";
  return strf("    thread%s %s %s returned\n", ids.size() > 1 ? "s" : "", ranges(ids).c_str(), ids.size() > 1 ? "have" : "has");
}

// Who waits where when a block cannot go on: "at_barrier" (groups at __syncthreads()), "waiting"
// (groups in `st`, a warp call or a cuda::barrier, unless it is the block barrier) and "exited".
static Facts waiter_facts(Worker& w, unsigned n, St st, Facts f = Facts()) {
  if (st != St::AtBarrier) f.set_json("waiting", waiters_json(w, n, st));
  f.set_json("at_barrier", waiters_json(w, n, St::AtBarrier));
  f.set_json("exited", ranges_json(exited_ids(w, n)));
  return f;
}

// Why a released __syncthreads() cannot let its threads go on: a loop around it that never ends
// (runaway_barrier), or threads that returned while the others reach it (barrier_divergence; the
// text lists who is where). Runs with the checks off too: it is the engine's rule, not the checker's.
struct BarrierProblem {
  Kind kind;
  std::string text;
  Facts facts;
};
// A __syncthreads() is about to release: false, or true with *problem filled in.
static bool barrier_release_problem(Worker& w, unsigned n, const char* file, int line, BarrierProblem* problem) {
  w.epoch_file = file;
  w.epoch_line = line;
  // How often each barrier was passed, for a loop that never ends.
  BarSite* s = nullptr;
  for (BarSite& b : w.bar_sites)
    if (b.line == line && b.file == file) s = &b;
  if (!s) {
    w.bar_sites.push_back(BarSite{file, line, 0});
    s = &w.bar_sites.back();
  }
  ++s->count;
  if (s->count > w.hot_count.load(std::memory_order_relaxed)) {
    w.hot_file.store(file, std::memory_order_relaxed);
    w.hot_line.store(line, std::memory_order_relaxed);
    w.hot_count.store(s->count, std::memory_order_relaxed);
  }
  if (s->count > (uint64_t)options().max_barrier_passes) {
    *problem = {Kind::runaway_barrier,
                strf("block %s passed the barrier at %s %llu times: a loop around it never ends (its condition never changes, "
                     "e.g. a stride multiplied by 1 or an index that is not incremented).\n  CUDASIM_MAX_BARRIERS sets the limit.",
                     dim_str(w.block.bid, w.block.gdim).c_str(), where(file, line).c_str(), (unsigned long long)s->count),
                Facts().set("passes", (long long)s->count).set("limit", (long long)options().max_barrier_passes)};
    return true;
  }
  if (w.exited == 0) return false;
  // Strict barriers: every thread passes the same barriers. One that returned while the others
  // reach this one diverged, even though the hardware would let the others go on.
  std::vector<unsigned> here;
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::vector<unsigned>>> gone;  // (barriers, last pc) -> threads
  for (unsigned i = 0; i < n; ++i) {
    const Thread& t = w.threads[i];
    if (t.st != St::Exited) {
      here.push_back(i);
      continue;
    }
    std::pair<uint32_t, uint32_t> key{t.bars_at_exit, last_access_pc(w, i)};
    auto it = std::find_if(gone.begin(), gone.end(), [&](auto& p) { return p.first == key; });
    if (it == gone.end()) gone.push_back({key, {i}});
    else it->second.push_back(i);
  }
  std::vector<uint32_t> pcs;
  for (auto& p : gone) pcs.push_back(p.first.second);
  symbolize_sites(pcs);
  unsigned passed = w.bar_epoch + 1;
  std::string out = strf("    thread%s %s reached the barrier at %s (barrier number %u of the block)\n", here.size() > 1 ? "s" : "",
                         ranges(here).c_str(), where(file, line).c_str(), passed);
  // "returned": [{"threads": [[4, 7]], "barriers": 1, "last_access": "f:12" or null}, ...]
  std::string returned;
  for (auto& p : gone) {
    unsigned b = p.first.first;
    const std::string last = p.first.second ? symbolized_site(p.first.second) : "";
    out += strf("    thread%s %s returned after passing %u barrier%s%s\n", p.second.size() > 1 ? "s" : "", ranges(p.second).c_str(), b,
                b == 1 ? "" : "s", p.first.second ? (" (last memory access at " + last + ")").c_str() : "");
    returned += strf("%s{\"threads\": %s, \"barriers\": %u, \"last_access\": %s}", returned.empty() ? "" : ", ",
                     ranges_json(p.second).c_str(), b, last.empty() ? "null" : json_quote(last).c_str());
  }
  Facts f;
  f.set("case", "returned").set_json("reached", ranges_json(here)).set("barrier_number", passed);
  f.set_json("returned", "[" + returned + "]");
  *problem = {Kind::barrier_divergence, out, f};
  return true;
}

// Runs one block to completion (or to its first error) under the grid's schedule.
void run_block(Worker& w, Grid& g, uint32_t linear) {
  const dim3 gd = g.grid, bd = g.block;
  unsigned n = bd.x * bd.y * bd.z;
  w.checking = g.checking;
  w.observed = g.observed;
  w.spin_watch = g.spin_watch;
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
  // Threads get a stack and the rest of their reset when they start (start_thread, thread_entry).
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = w.threads[i];
    t.st = St::Runnable;
    t.ready = 0;
    t.fresh = true;
    fiber_unmade(t.fiber, &w.idle);
  }
  w.stack_next = 0;
  w.stack_free.clear();
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
      Thread* first = next_in_sweep(w, order[0]);
      if (first != &w.idle) {
        if (first->fresh) start_thread(w, *first);
        enter(w, *first);
        fiber_switch(w.idle.fiber, first->fiber);  // back when the sweep is over (switch_away)
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
      Facts f;
      f.set("case", "cuda_barrier");
      for (unsigned i = 0; i < n; ++i) {
        const Thread& t = w.threads[i];
        if (t.st == St::AtCBar) {
          // "cbar": the barrier the first waiting thread waits on.
          f.set_json("cbar", "{\"init_site\": " + json_quote(where(t.cbar->init_file, t.cbar->init_line)) +
                                 strf(", \"expected\": %d, \"pending\": %d, \"phase\": %llu}", t.cbar->expected, t.cbar->pending,
                                      (unsigned long long)t.cbar_token));
          need = strf("  The barrier (initialised at %s for %d arrivals) still misses %d arrival%s in phase %llu: every thread it "
                      "counts must call arrive() (or arrive_and_wait()) once per phase.\n",
                      where(t.cbar->init_file, t.cbar->init_line).c_str(), t.cbar->expected, t.cbar->pending,
                      t.cbar->pending == 1 ? "" : "s", (unsigned long long)t.cbar_token);
          break;
        }
      }
      g.fail(block_diagnosis(Kind::deadlock, w, nullptr, "", waiter_facts(w, n, St::AtCBar, f)),
             strf("deadlock in %s, block %s: threads wait on a cuda::barrier phase that can never complete.\n%s%s%s%s",
                  ksite().c_str(), blk().c_str(), list_waiters(w, n, St::AtCBar).c_str(), list_waiters(w, n, St::AtBarrier).c_str(),
                  list_exited(w, n).c_str(), need.c_str()));
      return;
    }
    if (w.at_warp > 0) {
      bool mixed = w.bar_arrived > 0;
      // A mask that came from __activemask() in divergent code names only the lanes of one side.
      std::string am;
      Facts f;
      f.set("case", "warp").set("mixed", mixed);
      for (unsigned i = 0; i < n && am.empty(); ++i) {
        const Thread& t = w.threads[i];
        if (t.st == St::AtWarp && t.am_file && t.wait_mask == t.am_mask) {
          f.set_json("activemask", strf("{\"mask\": %u, \"thread\": %u, \"site\": ", t.am_mask, i) +
                                       json_quote(where(t.am_file, t.am_line)) + "}");
          am = strf("  The mask 0x%08x of thread %u came from __activemask() at %s, which returns only the lanes that reached "
                    "that call together: in divergent code, the lanes of the other branch are not in it. Use a mask the whole "
                    "warp agrees on, such as 0xffffffff or __ballot_sync(0xffffffff, cond) taken before the branch.\n",
                    t.am_mask, i, where(t.am_file, t.am_line).c_str());
        }
      }
      g.fail(block_diagnosis(mixed ? Kind::barrier_divergence : Kind::deadlock, w, nullptr, "", waiter_facts(w, n, St::AtWarp, f)),
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
      g.fail(block_diagnosis(Kind::barrier_divergence, w, nullptr, "",
                             waiter_facts(w, n, St::AtBarrier, Facts().set("case", "different_barriers"))),
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
    if (barrier_release_problem(w, n, w.bar_file, w.bar_line, &problem)) {
      const Diagnosis d = block_diagnosis(problem.kind, w, nullptr, where(w.bar_file, w.bar_line), problem.facts);
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
    w.released_file = w.bar_file;
    w.released_line = w.bar_line;
    w.released_what = w.bar_what;
    ++w.bar_epoch;
    if (__builtin_expect(w.il != nullptr, 0)) {
      interleave_turn(w);
      if (g.abort.load(std::memory_order_relaxed)) return;
    }
  }
}

}  // namespace detail
}  // namespace cudasim

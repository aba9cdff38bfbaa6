// The worker pool: OS threads that take the blocks of a grid in dispatch order, one block at a
// time (scheduler.cpp runs it); apart from the scheduler, which knows nothing of threads or grids.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <thread>

#include "scheduler.h"
#include "events.h"

namespace cudasim {
namespace detail {

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

void Grid::fail(const Diagnosis& d, const std::string& msg) {
  std::lock_guard<std::mutex> lock(err_mu);
  if (err.code == 0) {
    trace_error(*this, kind_category(d.kind), msg);
    err = ErrorRec(d, msg);
  }
  abort.store(true);
}

// ---------------------------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------------------------

// Interleaved runs: as many blocks as one SM holds take turns on worker 0's OS thread. Each is run
// by a slot: a Worker of its own (threads, shared memory, barrier state) and a fiber that runs
// blocks in dispatch order. The OS thread's own context dispatches the turns.
static constexpr size_t kMaxResident = 4;       // blocks side by side, at most
static constexpr size_t kThreadsPerSM = 2048;   // an H200 SM's resident threads: fewer big blocks
static constexpr size_t kSlotStack = 1u << 20;  // run_block and its reports on a slot's own fiber

struct Slot {
  Worker* w = nullptr;
  FiberCtx ctx;                // the slot's fiber, while it waits for its turn between barriers
  char* stack = nullptr;
  FiberCtx* resume = nullptr;  // what its turn continues: &ctx, or the fiber of a thread that polled
  Thread* thread = nullptr;    // that thread, or null
  bool done = false;
};

struct Interleave {
  Grid* g = nullptr;
  FiberCtx dispatch;  // the OS thread's context, which picks the next turn
  std::vector<Slot> slots;
  Slot* cur = nullptr;
  uint64_t rng = 0;
  // Bumped when a block passes a barrier or finishes: a poller that sees it moved has been waiting
  // for something that may now have come, so its count towards an endless wait starts again.
  uint64_t progress = 0;
};

namespace {
struct Pool {
  std::mutex mu;
  std::condition_variable cv_work, cv_done;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<Worker>> resident;  // the slots' workers (no OS thread of their own)
  std::vector<char*> slot_stacks;
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

static std::atomic<bool> g_thread_local_shared{false};
bool note_thread_local_shared(const char*) {
  g_thread_local_shared.store(true);
  return true;
}
bool thread_local_shared_used() { return g_thread_local_shared.load(); }

std::vector<Worker*> all_workers() {
  std::vector<Worker*> v;
  for (auto& w : pool().workers) v.push_back(w.get());
  for (auto& w : pool().resident) v.push_back(w.get());
  return v;
}

// Gives the OS thread back to the dispatcher: the running slot's turn ends where `resume` says.
static void end_turn(Interleave& il, FiberCtx& from, FiberCtx* resume, Thread* thread) {
  Slot& s = *il.cur;
  s.resume = resume;
  s.thread = thread;
  fiber_switch(from, il.dispatch);
}

void interleave_turn(Worker& w) {
  Interleave& il = *w.il;
  ++il.progress;
  end_turn(il, il.cur->ctx, &il.cur->ctx, nullptr);
}

void interleave_poll_yield(Worker& w, Thread& t) {
  Interleave& il = *w.il;
  const uint64_t seen = il.progress;
  end_turn(il, t.fiber, &t.fiber, &t);
  if (il.progress != seen) t.spin_polls = 0;
}

std::string interleave_state(const Worker& w) {
  const Interleave& il = *w.il;
  const Grid& g = *il.g;
  const size_t blocks = g.order.size();
  std::vector<unsigned> beside;
  for (const Slot& s : il.slots)
    if (!s.done && s.w != &w && s.w->block_start_ns.load(std::memory_order_relaxed)) beside.push_back(s.w->block_linear);
  const size_t started = std::min(blocks, size_t(g.next.load(std::memory_order_relaxed)));
  const size_t finished = started - 1 - beside.size();
  std::string others = beside.empty() ? std::string("no other block")
                                      : strf("block%s %s", beside.size() == 1 ? "" : "s", ranges(beside).c_str());
  return strf("running side by side with %s (the '%s' order runs up to %zu blocks at once, taking turns at barriers and "
              "polls, as blocks share a GPU), with %zu block%s finished and %zu not started; every running block waits too",
              others.c_str(), schedule_name(g.schedule), il.slots.size(), finished, finished == 1 ? "" : "s",
              blocks - started);
}

// interleave_state's facts: "beside" (the blocks running beside it, linear indices as ranges),
// "schedule", "at_once" (the blocks the order runs at once), "finished" and "not_started".
void interleave_facts(const Worker& w, Facts& f) {
  const Interleave& il = *w.il;
  const Grid& g = *il.g;
  const size_t blocks = g.order.size();
  std::vector<unsigned> beside;
  for (const Slot& s : il.slots)
    if (!s.done && s.w != &w && s.w->block_start_ns.load(std::memory_order_relaxed)) beside.push_back(s.w->block_linear);
  const size_t started = std::min(blocks, size_t(g.next.load(std::memory_order_relaxed)));
  f.set_json("beside", ranges_json(beside)).set("schedule", schedule_name(g.schedule)).set("at_once", il.slots.size());
  f.set("finished", started - 1 - beside.size()).set("not_started", blocks - started);
}

// A slot's fiber: runs blocks in dispatch order until none is left, taking a turn after each.
static void slot_main(void* arg) {
  Slot& s = *static_cast<Slot*>(arg);
  Worker& w = *s.w;
  Interleave& il = *w.il;
  Grid& g = *il.g;
  for (;;) {
    if (g.abort.load()) break;
    size_t i = g.next.fetch_add(1);
    if (i >= g.order.size()) break;
    run_block(w, g, g.order[i]);
    w.current.store(nullptr, std::memory_order_relaxed);
    w.block_start_ns.store(0, std::memory_order_relaxed);
    ++il.progress;
    if (g.next.load() < g.order.size()) end_turn(il, s.ctx, &s.ctx, nullptr);
  }
  s.done = true;
  for (;;) end_turn(il, s.ctx, &s.ctx, nullptr);  // never resumed once done
}

// Runs the grid's blocks as slots taking turns on this OS thread, in an order drawn from the seed:
// the same on every machine and for every number of workers.
static void run_interleaved(Worker& host, Grid& g) {
  Pool& p = pool();
  const size_t threads = size_t(g.block.x) * g.block.y * g.block.z;
  const size_t n = std::min({kMaxResident, g.order.size(), std::max<size_t>(2, kThreadsPerSM / std::max<size_t>(1, threads))});
  Interleave il;
  il.g = &g;
  il.rng = g.seed ^ 0xA0761D6478BD642Full;
  il.slots.resize(n);
  std::vector<Slot*> live;
  for (size_t i = 0; i < n; ++i) {
    Slot& s = il.slots[i];
    s.w = p.resident[i].get();
    s.w->grid = &g;
    if (!s.w->os_thread_known.load()) {  // worker 0's thread, the only one that runs slots
      s.w->os_thread = host.os_thread;
      s.w->os_thread_known.store(true);
    }
    s.w->il = &il;
    s.stack = p.slot_stacks[i];
    fiber_make(s.ctx, s.stack, kSlotStack, slot_main, &s);
    s.resume = &s.ctx;
    live.push_back(&s);
  }
  while (!live.empty() && !g.abort.load()) {
    // A random slot; after a poll, another one than the poller's, so that what it waits for can come.
    size_t k = splitmix(il.rng) % live.size();
    if (il.cur && il.cur->thread && live.size() > 1 && live[k] == il.cur)
      k = (k + 1 + splitmix(il.rng) % (live.size() - 1)) % live.size();
    Slot& s = *live[k];
    il.cur = &s;
    tl_worker = s.w;
    tl_block = &s.w->block;
    tl_block_view = s.w->block;
    if (s.thread) {
      tl_thread = &s.thread->view;
      tl_thread_view = s.thread->view;
      s.w->current.store(s.thread, std::memory_order_relaxed);
    } else {
      tl_thread = nullptr;
    }
    fiber_switch(il.dispatch, *s.resume);
    if (s.done) live.erase(live.begin() + k);
  }
  for (Slot& s : il.slots) {
    s.w->il = nullptr;
    s.w->current.store(nullptr, std::memory_order_relaxed);
    s.w->block_start_ns.store(0, std::memory_order_relaxed);
  }
  tl_worker = &host;
  tl_thread = nullptr;
  tl_block = nullptr;
}

static void worker_loop(Worker* w) {
  Pool& p = pool();
  tl_worker = w;
  w->os_thread = pthread_self();
  w->os_thread_known.store(true);
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
    // between threads, and what they find does not depend on the number of cores. So does a
    // spin-watched one: blocks one after another, so that a block that waits for another block
    // finishes, or is reported (watch_spin), the same way with any number of workers.
    if (g->interleave && w->index == 0) run_interleaved(*w, *g);
    for (;;) {
      if ((g->observed || g->spin_watch || g->interleave) && w->index != 0) break;
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
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < kMaxResident; ++i) {
    p.resident.emplace_back(new Worker());
    p.resident.back()->index = -1;  // not a pool thread: worker_loop never sees it
    void* m = mmap(nullptr, kSlotStack + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) out_of_memory("stack", "the simulator could not allocate a stack (out of memory)");
    mprotect(m, page, PROT_NONE);  // an overflow faults here
    p.slot_stacks.push_back(static_cast<char*>(m) + page);
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

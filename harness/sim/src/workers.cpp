// The worker pool: OS threads that take the blocks of a grid in dispatch order, one block at a
// time (scheduler.cpp runs it); apart from the scheduler, which knows nothing of threads or grids.
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
    // between threads, and what they find does not depend on the number of cores. So does a
    // spin-watched one: blocks one after another, so that a block that waits for another block
    // finishes, or is reported (watch_spin), the same way with any number of workers.
    for (;;) {
      if ((g->observed || g->spin_watch) && w->index != 0) break;
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

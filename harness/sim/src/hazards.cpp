// The memory checker's event handlers other than the access (hazard_check.h has that one): launch
// and block begin and end, barriers, warp syncs, fences and cuda::barrier phases, which order the
// accesses that follow.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "checker_state.h"
#include "events.h"
#include "sampling.h"

namespace cudasim {
namespace detail {

Checker g_chk;

// ---- engine hooks -------------------------------------------------------------------------------

void MemoryChecker::launch_begin(const LaunchBegin& e) {
  Grid& g = e.g;
  const void* const* ptrs = e.ptrs;
  const char* const* names = e.names;
  const int n = e.n;
  Checker& c = g_chk;
  c.active = g.checking;
  // The access front end finds device buffers for every observer: the map is needed whenever the
  // launch is observed (the profiler alone, too).
  if (g.observed) {
    std::lock_guard<std::mutex> lock(g_dev_mu);
    c.devs.clear();
    for (auto& kv : g_dev) c.devs.push_back(&kv.second);
    c.mru = c.mru2 = c.devs.empty() ? nullptr : c.devs.front();
  }
  if (!c.active) return;
  c.grid = &g;
  c.first_run = c.next_run;
  c.run_block.clear();
  c.releases.clear();
  c.rel_seq = 0;
  c.run_done.clear();
  c.pending.clear();
  c.cas_read_sites.clear();
  c.hazards.clear();
  c.uninit.clear();
  c.total_hazards = c.total_uninit = 0;
  c.args.clear();
  c.restricted.clear();
  for (int i = 0; i < n; ++i) {
    if (!ptrs[i]) continue;
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptrs[i]);
    c.args.push_back(ArgName{p, names[i] ? names[i] : ""});
    if (e.read_only && e.read_only[i])
      for (DevShadow* d : c.devs)
        if (p - d->data < d->bytes) c.restricted.emplace_back(d, names[i] ? names[i] : "");
  }
}

void MemoryChecker::block_begin(Worker& w, unsigned n) {
  sample_block(w);  // a block of a big launch outside the sample runs unchecked (sampling.cpp)
  if (!w.checking) return;
  Checker& c = g_chk;
  if (!w.ck) w.ck = new WorkerCheck();  // lives as long as the worker
  WorkerCheck& wc = *w.ck;
  wc.run = c.next_run++;
  wc.arr_lo = wc.arr_len = 0;
  if (wc.threads.size() < n) wc.threads.resize(n);
  c.run_block.push_back(w.block_linear);
  c.releases.emplace_back();
  c.run_done.push_back(0);
  for (unsigned i = 0; i < n; ++i) {
    ThreadCheck& k = wc.threads[i];
    std::memset(&k, 0, sizeof k);
    k.cslot = kNoSlot;
    k.vc[i % 32] = 1;  // a lane's own clock starts above what the others know of it (0)
  }
  wc.ncbar = 0;
  wc.blk_seen = wc.blk_seen_pending = wc.blk_acq = wc.blk_acq_pending = 0;
  w.epoch_file = nullptr;
  w.epoch_line = 0;
  w.bar_sites.clear();
}

void MemoryChecker::block_end(Worker& w) {
  if (!w.checking) return;
  report_pending(w.ck->run);
  g_chk.run_done[w.ck->run - g_chk.first_run] = 1;
  close_findings(w.ck->run, nullptr, 0);
}

void MemoryChecker::barrier(Worker& w, const char* file, int line) {
  if (!w.checking) return;
  WorkerCheck& wc = *w.ck;
  wc.blk_seen = std::max(wc.blk_seen, wc.blk_seen_pending);
  wc.blk_acq = std::max(wc.blk_acq, wc.blk_acq_pending);
  close_findings(wc.run, file, line);
}

uint32_t last_access_pc(const Worker& w, unsigned thread) { return w.checking ? w.ck->threads[thread].last_pc : 0; }

void MemoryChecker::warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g) {
  if (!w.checking) return;
  const unsigned lanes = g.arrived;
  ThreadCheck* t = &w.ck->threads[warp_index * 32];
  uint16_t join[32] = {0};
  for (unsigned l = 0; l < 32; ++l)
    if (lanes & (1u << l))
      for (unsigned j = 0; j < 32; ++j) join[j] = std::max(join[j], t[l].vc[j]);
  for (unsigned l = 0; l < 32; ++l)
    if (lanes & (1u << l)) {
      std::memcpy(t[l].vc, join, sizeof join);
      if (t[l].vc[l] < 0xffff) ++t[l].vc[l];
    }
}

// A fence makes the thread's next atomic a release, and acquires what its last atomic saw: at
// device scope for every block, at block scope for the threads of its own block only.
void MemoryChecker::fence(Worker& w, Thread& t, uint8_t scope, uint32_t pc) {
  if (!w.checking) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  ++k.fences;
  const bool device = scope < kScopeBlock;
  if (!device && pc) k.block_fence_pc = pc;
  k.fenced = std::max<uint8_t>(k.fenced, device ? 2 : 1);
  k.fence_epoch = w.bar_epoch;
  k.acq_b = std::max(k.acq_b, k.seen_b);
  if (!device) return;
  k.acq = std::max({k.acq, k.seen, w.ck->blk_seen});
  w.ck->blk_acq_pending = std::max(w.ck->blk_acq_pending, k.acq);
}

void MemoryChecker::unshadowed_atomic(Worker& w, Thread& t, uint8_t scope) {
  if (!w.checking) return;
  atomic_sync(*w.ck, w.ck->threads[t.linear], uint16_t(t.linear), scope);
}

static uint8_t cbar_slot(WorkerCheck& wc, const CBarState* b) {
  for (int i = 0; i < wc.ncbar; ++i)
    if (wc.cbar_slots[i] == b) return uint8_t(i);
  if (wc.ncbar == 4) return kNoSlot;  // a fifth barrier in one block: its phases order nothing (may over-report)
  wc.cbar_slots[wc.ncbar] = b;
  return uint8_t(wc.ncbar++);
}

void MemoryChecker::cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t, bool, const char*, int) {
  if (!w.checking) return;
  uint8_t s = cbar_slot(*w.ck, b);
  if (s == kNoSlot) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  ++k.carr[s];
  k.cslot = s;
}

void MemoryChecker::cbar_waited(Worker& w, Thread& t, const CBarState* b, uint64_t phase) {
  if (!w.checking) return;
  uint8_t s = cbar_slot(*w.ck, b);
  if (s == kNoSlot) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  k.cwait[s] = std::max<uint16_t>(k.cwait[s], uint16_t(phase + 1));
  k.cslot = s;
}

}  // namespace detail
}  // namespace cudasim

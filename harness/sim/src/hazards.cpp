// The memory checker's hazard check: the access handler (MemoryChecker::access), the order between
// two accesses (barriers, warp syncs, cuda::barrier phases, release/acquire) and its other event handlers.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "checker_state.h"
#include "events.h"

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
    c.gap_lo = c.gap_hi = 0;
  }
  if (!c.active) return;
  c.grid = &g;
  c.first_run = c.next_run;
  c.run_block.clear();
  c.releases.clear();
  c.rel_seq = 0;
  c.hazards.clear();
  c.uninit.clear();
  c.total_hazards = c.total_uninit = 0;
  c.args.clear();
  for (int i = 0; i < n; ++i)
    if (ptrs[i]) c.args.push_back(ArgName{reinterpret_cast<uintptr_t>(ptrs[i]), names[i] ? names[i] : ""});
}

void MemoryChecker::block_begin(Worker& w, unsigned n) {
  if (!w.checking) return;
  Checker& c = g_chk;
  if (!w.ck) w.ck = new WorkerCheck();  // lives as long as the worker
  WorkerCheck& wc = *w.ck;
  wc.run = c.next_run++;
  wc.arr_lo = wc.arr_len = 0;
  if (wc.threads.size() < n) wc.threads.resize(n);
  c.run_block.push_back(w.block_linear);
  c.releases.emplace_back();
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

void MemoryChecker::fence(Worker& w, Thread& t) {
  if (!w.checking) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  ++k.fences;
  k.fenced = true;
  k.fence_epoch = w.bar_epoch;
  k.acq = std::max({k.acq, k.seen, w.ck->blk_seen});
  w.ck->blk_acq_pending = std::max(w.ck->blk_acq_pending, k.acq);
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

// ---- the checks -----------------------------------------------------------------------------

// Whether the earlier access `a` is ordered before the current one.
static bool ordered(const Stamp& a, const Ctx& c) {
  if (a.run != c.s.run) {
    if (c.space != Space::Device) return true;  // an earlier block's shared memory
    if (a.run < g_chk.first_run) return true;    // an earlier launch
    // Another block of this launch: only a release it made and this block acquired orders them.
    uint64_t level = std::max(c.k->acq, c.w->ck->blk_acq);
    for (const Release& r : g_chk.releases[a.run - g_chk.first_run])
      if (r.seq <= level && (a.epoch < r.epoch || (a.thread == r.thread && a.fences < r.fences))) return true;
    return false;
  }
  if (a.thread == c.s.thread) return true;
  if (a.epoch != c.s.epoch) return true;  // a __syncthreads() lies between them
  if (a.thread / 32 == c.s.thread / 32 && a.wclock <= c.k->vc[a.thread % 32]) return true;  // a warp sync
  // A cuda::barrier phase: the access came before the earlier thread's arrival, and the current
  // thread has waited for that phase to complete. Before its first arrival a thread is in phase 0
  // of every barrier.
  if (stamp_slot(a) != kNoSlot) return c.k->cwait[stamp_slot(a)] > a.carr;
  for (int i = 0; i < c.w->ck->ncbar; ++i)
    if (c.k->cwait[i] > 0) return true;
  return false;
}

static inline bool empty(const Stamp& s) { return s.run == 0; }

// Field by field, each load as wide as the store that wrote the field into the Ctx: a whole-struct
// copy reads 8 or 16 bytes that narrower stores have just written, which the CPU cannot forward
// from its store buffer.
static inline void store_stamp(Stamp& d, const Stamp& s, uint8_t flags) {
  d.run = s.run;
  d.epoch = s.epoch;
  d.pc = s.pc;
  d.wclock = s.wclock;
  d.thread = s.thread;
  d.carr = s.carr;
  d.fences = s.fences;
  d.flags = flags;
}

static void check_cell(Ctx& c, Cell& cell, uint32_t mask, bool write, bool read) {
  const bool atomic = c.s.flags & kAtomic;
  const Stamp& s = c.s;
  const uint8_t flags = uint8_t((s.flags & 0x0f) | (mask << 4));
  // Initialised bytes.
  if (read) {
    uint32_t have;
    if (c.space == Space::Device) have = cell.init & 0xf;
    else have = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
    if ((have & mask) != mask) record_uninit(c);
  }
  auto overlap = [&](const Stamp& a) { return ((a.flags >> 4) & mask) != 0; };
  // Two atomics never conflict. Nor does a plain read with an atomic write: a CAS loop starts
  // from a plain read of the value other threads update atomically (the CUDA guide's own
  // atomicAdd for double), and the CAS checks it. Plain writes and read-modify-writes do conflict.
  auto conflicts = [&](const Stamp& a, bool a_wrote) {
    if (empty(a) || !overlap(a) || ordered(a, c)) return false;
    bool a_atomic = a.flags & kAtomic;
    if (atomic && a_atomic) return false;
    if (a_wrote && a_atomic && !write && read) return false;  // plain read after an atomic write
    if (!a_wrote && atomic && write) return false;            // atomic write after a plain read
    return true;
  };
  if (write) {
    if (conflicts(cell.w, true)) record_hazard(c, cell.w, "write-after-write");
    if (conflicts(cell.r1, false)) record_hazard(c, cell.r1, "write-after-read");
    else if (conflicts(cell.r2, false)) record_hazard(c, cell.r2, "write-after-read");
    store_stamp(cell.w, s, flags);
    cell.r1.run = cell.r2.run = 0;
    if (c.space == Space::Device) cell.init = set_dev_init(cell.init, mask, 3);
    else {
      uint32_t cur = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
      cell.init = ((s.run & 0x0fffffffu) << 4) | cur | mask;
    }
  } else {
    if (conflicts(cell.w, true)) record_hazard(c, cell.w, "read-after-write");
    if (!empty(cell.r1) && (cell.r1.thread != s.thread || cell.r1.run != s.run)) cell.r2 = cell.r1;
    store_stamp(cell.r1, s, flags);
  }
}

[[noreturn]] __attribute__((noinline, cold)) static void out_of_bounds(Ctx& c, bool write, const std::string& what) {
  std::string site = site_of(c.s.pc);
  thread_fault_ext(*c.w, *c.t, Kind::out_of_bounds,
                   strf("out-of-bounds %s of %s in %s, block %s, thread %s, at %s: %s.\n"
                        "  Check the index against the array's size on both sides: a guard such as `i >= offset` before "
                        "reading [i - offset], and `i < n` before [i].",
                        write ? "write" : "read", space_word(c.space), kernel_str(c.w->grid->site).c_str(),
                        dim_str(c.w->block.bid, c.w->block.gdim).c_str(), dim_str(c.t->view.tid, c.w->block.bdim).c_str(),
                        site.c_str(), what.c_str()),
                   site);
}

// ---- the checker's handler ------------------------------------------------------------------------

void MemoryChecker::access(const AccessEvent& e) {
  Worker* w = &e.w;
  if (!w->checking) return;
  Thread& t = e.t;
  const uintptr_t a = e.addr;
  const size_t size = e.size;
  const bool write = e.write, read = e.read, atomic = e.atomic;
  Ctx c;
  c.space = e.space;
  Cell* cells;
  uintptr_t base;
  WorkerCheck& wc = *w->ck;
  if (c.space == Space::Shared) {
    base = w->sh_lo;
    if (__builtin_expect(!wc.sh_shadow, 0)) wc.sh_shadow = map_cells(w->sh_len / 4);
    cells = wc.sh_shadow;
  } else if (c.space == Space::Dynamic) {
    base = w->dyn_lo;
    if (__builtin_expect(!wc.dyn_shadow, 0)) wc.dyn_shadow = map_cells(w->dyn_len / 4);
    cells = wc.dyn_shadow;
  } else {
    DevShadow* d = e.region;
    base = d->data;
    cells = d->cells;
    c.w = w;
    c.t = &t;
    c.addr = a;
    c.s.pc = e.pc;
    c.s.thread = uint16_t(t.linear);
    if (a < d->data || a + size > d->data + d->bytes) {
      Where x = describe(*w, Space::Device, a);
      size_t count = d->bytes / x.elem;
      out_of_bounds(c, write,
                    strf("%s is outside the buffer, which has %zu element%s (valid indices 0 to %lld)", where_str(x).c_str(),
                         count, count == 1 ? "" : "s", (long long)count - 1));
    }
  }
  c.w = w;
  c.t = &t;
  c.addr = a;
  ThreadCheck& k = wc.threads[t.linear];
  c.k = &k;
  c.s.run = wc.run;
  c.s.epoch = w->bar_epoch;
  c.s.pc = e.pc;
  c.s.wclock = k.vc[t.view.lane];
  c.s.thread = uint16_t(t.linear);
  c.s.carr = k.cslot != kNoSlot ? k.carr[k.cslot] : 0;
  c.s.fences = uint8_t(std::min<unsigned>(k.fences, 255));
  c.s.flags = uint8_t((atomic ? kAtomic : 0) | (k.cslot << 1));
  k.last_pc = c.s.pc;
  if (c.space == Space::Shared) {
    // Inside the arena but in no array: before an array's start or past its end.
    bool inside = a - wc.arr_lo < wc.arr_len && a + size - wc.arr_lo <= wc.arr_len;  // the array used last
    for (size_t i = 0; !inside && i < w->shared_arrays.size(); ++i) {
      const SharedArray& s = w->shared_arrays[i];
      uintptr_t p = reinterpret_cast<uintptr_t>(s.p);
      if (a >= p && a + size <= p + s.bytes) {
        inside = true;
        wc.arr_lo = p;
        wc.arr_len = s.bytes;
      }
    }
    if (!inside) {
      Where x = describe(*w, Space::Shared, a);
      long long count = 0;
      for (const SharedArray& s : w->shared_arrays)
        if (x.array == s.name) count = (long long)(s.bytes / (s.elem ? s.elem : 1));
      out_of_bounds(c, write,
                    strf("%s is outside __shared__ %s, which has %lld element%s (valid indices 0 to %lld)", where_str(x).c_str(),
                         x.array.c_str(), count, count == 1 ? "" : "s", count - 1));
    }
  } else if (c.space == Space::Dynamic) {
    uintptr_t lo = reinterpret_cast<uintptr_t>(w->dyn_start);
    if (a < lo || a + size > lo + w->dyn_bytes) {
      Where x = describe(*w, Space::Dynamic, a);
      long long count = (long long)(w->dyn_bytes / x.elem);
      if (w->dyn_bytes == 0)
        out_of_bounds(c, write,
                      strf("%s is dynamic shared memory, but the launch asked for none (the third <<<>>> argument sets "
                           "its size in bytes)", where_str(x).c_str()));
      else
      out_of_bounds(c, write,
                    strf("%s is outside the %zu bytes of dynamic shared memory that the launch asked for (%lld element%s, valid "
                         "indices 0 to %lld; the third <<<>>> argument sets the size)",
                         where_str(x).c_str(), w->dyn_bytes, count, count == 1 ? "" : "s", count - 1));
    }
  }
  // Atomics: a release (fence, then atomic) publishes this block's writes; the atomic observes
  // every release made so far.
  if (atomic && c.space == Space::Device) {
    Checker& ch = g_chk;
    if (k.fenced) {
      ch.releases[wc.run - ch.first_run].push_back(
          Release{++ch.rel_seq, k.fence_epoch, c.s.thread, uint16_t(std::min<unsigned>(k.fences, 255))});
      c.s.fences = uint8_t(std::min<unsigned>(k.fences - 1u, 255));  // the releasing atomic is part of the release
      k.fenced = false;
    }
    k.seen = ch.rel_seq;
    wc.blk_seen_pending = std::max(wc.blk_seen_pending, k.seen);
  }
  uintptr_t hi = a + size;
  for (uintptr_t ca = base + ((a - base) & ~uintptr_t(3)); ca < hi; ca += 4) {
    uint32_t m = byte_mask(ca, a, hi);
    check_cell(c, cells[(ca - base) >> 2], m, write, read);
  }
}

}  // namespace detail
}  // namespace cudasim

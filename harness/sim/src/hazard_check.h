// The memory checker's per-access check: MemoryChecker::access and the order between two
// accesses (barriers, warp syncs, cuda::barrier phases, release/acquire). Inline, and included only
// by access.cpp, so that the access front end and the check compile into one function: as a call
// from access.cpp into another file, the checked path of `scripts/bench_sim.py` ran 4 % more
// instructions (callgrind, p14 --complete). The checker's other handlers are in hazards.cpp.
#pragma once

#include "private.h"

#include <algorithm>
#include <string>

#include "checker_state.h"
#include "events.h"
#include "watch.h"

namespace cudasim {
namespace detail {

// ---- the checks -----------------------------------------------------------------------------

// Whether a release of the same block orders `a` before the current access: the thread that made
// `a` released after it (a fence, then an atomic) and the current thread acquired that release
// (an atomic that saw it, then a fence), at any scope. A lock between threads of one block.
static bool ordered_in_block(const Stamp& a, const Ctx& c, const std::vector<Release>& rels) {
  uint64_t level = c.k->acq_b;
  for (const Release& r : rels)
    if (r.seq <= level && a.thread == r.thread && a.fences < r.fences) return true;
  return false;
}

// Whether the earlier access `a` is ordered before the current one.
static bool ordered(const Stamp& a, const Ctx& c) {
  if (a.run != c.s.run) {
    if (c.space != Space::Device) return true;  // an earlier block's shared memory
    if (a.run < g_chk.first_run) return true;    // an earlier launch
    // Another block of this launch: only a device-scope release it made and this block acquired
    // at device scope orders them.
    uint64_t level = std::max(c.k->acq, c.w->ck->blk_acq);
    for (const Release& r : g_chk.releases[a.run - g_chk.first_run])
      if (r.device && r.seq <= level && (a.epoch < r.epoch || (a.thread == r.thread && a.fences < r.fences))) return true;
    return false;
  }
  if (a.thread == c.s.thread) return true;
  if (a.epoch != c.s.epoch) return true;  // a __syncthreads() lies between them
  if (a.thread / 32 == c.s.thread / 32 && a.wclock <= c.k->vc[a.thread % 32]) return true;  // a warp sync
  const std::vector<Release>& rels = g_chk.releases[c.s.run - g_chk.first_run];
  if (__builtin_expect(!rels.empty(), 0) && ordered_in_block(a, c, rels)) return true;
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

// What an unordered-or-not pair (the earlier access `a`, the current one) is.
enum class Pair : uint8_t { Fine, Hazard, Scope, MixedSize, ReadOnly, PlainRead };

static Pair classify(const Ctx& c, const Stamp& a, bool a_wrote, uint32_t mask, bool write, bool read) {
  if (empty(a) || ((a.flags >> 4) & mask) == 0) return Pair::Fine;
  const uint32_t bits = a.pc | c.s.pc;
  // The read-only path is not coherent with writes made during the launch, whatever orders them:
  // a load of bytes another block writes (before or after) may return a stale value.
  if (__builtin_expect(bits & kPcReadOnly, 0) && a.run != c.s.run && a.run >= g_chk.first_run && c.space == Space::Device)
    return Pair::ReadOnly;
  if (ordered(a, c)) return Pair::Fine;
  const bool atomic = c.s.flags & kAtomic, a_atomic = a.flags & kAtomic;
  if (!atomic && !a_atomic) return Pair::Hazard;  // plain (or volatile) with plain: as ever
  // At least one atomic. Two strong accesses (atomic or volatile) are morally strong, and so not a
  // race, when each is in the other's scope and they cover the same bytes (PTX memory model).
  const bool a_strong = a_atomic || (a.pc & kPcStrong), s_strong = atomic || (c.s.pc & kPcStrong);
  if (a_strong && s_strong) {
    const unsigned sa = stamp_scope(a), ss = c.s.pc >> kPcScopeShift;
    const bool narrow = (a_atomic && sa >= kScopeBlock) || (atomic && ss >= kScopeBlock);
    const bool thread_only = (a_atomic && sa == kScopeThread) || (atomic && ss == kScopeThread);
    if ((narrow && a.run != c.s.run) || thread_only) return Pair::Scope;
    if (((a.flags >> 4) != mask) || ((a.pc ^ c.s.pc) & kPcWide)) return Pair::MixedSize;
    return Pair::Fine;
  }
  // One atomic and one plain access. A plain write (or a read-modify-write against a plain
  // access's write) is a hazard. A plain read of what an atomic writes is one too, except in a CAS
  // loop: the reading thread validates the value with an atomicCAS (defer_hazard waits for it).
  const bool plain_reads_only = a_atomic ? (!write && read) : !a_wrote;
  if (plain_reads_only) return Pair::PlainRead;
  if ((a_atomic && stamp_scope(a) >= kScopeBlock && a.run != c.s.run) ||
      (atomic && (c.s.pc >> kPcScopeShift) >= kScopeBlock && a.run != c.s.run))
    return Pair::Scope;
  return Pair::Hazard;
}

static void report(Ctx& c, const Stamp& a, Pair p, const char* kind) {
  switch (p) {
    case Pair::Fine: return;
    case Pair::Hazard: record_hazard(c, a, kind); return;
    case Pair::Scope: record_hazard(c, a, kind, HazardClass::Scope); return;
    case Pair::MixedSize: record_hazard(c, a, kind, HazardClass::MixedSize); return;
    case Pair::ReadOnly: record_hazard(c, a, kind, HazardClass::ReadOnly); return;
    case Pair::PlainRead: {
      // The plain read is the current access (read-after-write) or the earlier one.
      bool cur = kind[0] == 'r';
      defer_hazard(c, a, kind, cur ? c.s.run : a.run, cur ? c.s.thread : a.thread);
      return;
    }
  }
}

// `dinit`: the word's DevShadow::init (device memory), null for shared memory (Cell::init).
static void check_cell(Ctx& c, Cell& cell, uint32_t mask, bool write, bool read, uint16_t* dinit) {
  const Stamp& s = c.s;
  const uint8_t flags = uint8_t((s.flags & 0x0f) | (mask << 4));
  // Initialised bytes.
  if (read) {
    uint32_t have;
    if (dinit) have = *dinit & 0xf;
    else have = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
    if ((have & mask) != mask) record_uninit(c);
  }
  if (write) {
    Pair p = classify(c, cell.w, true, mask, write, read);
    if (__builtin_expect(p != Pair::Fine, 0)) report(c, cell.w, p, "write-after-write");
    const Stamp* r = &cell.r1;
    p = classify(c, cell.r1, false, mask, write, read);
    if (p == Pair::Fine) p = classify(c, *(r = &cell.r2), false, mask, write, read);
    if (__builtin_expect(p != Pair::Fine, 0)) report(c, *r, p, "write-after-read");
    store_stamp(cell.w, s, flags);
    cell.r1.run = cell.r2.run = 0;
    if (dinit) *dinit = uint16_t(set_dev_init(*dinit, mask, 3) | (c.via_atomic ? kInitViaAtomic : 0));
    else {
      uint32_t cur = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
      cell.init = ((s.run & 0x0fffffffu) << 4) | cur | mask;
    }
  } else {
    Pair p = classify(c, cell.w, true, mask, write, read);
    if (__builtin_expect(p != Pair::Fine, 0)) report(c, cell.w, p, "read-after-write");
    if (!empty(cell.r1) && (cell.r1.thread != s.thread || cell.r1.run != s.run)) cell.r2 = cell.r1;
    store_stamp(cell.r1, s, flags);
  }
}

// ---- the checker's handler ------------------------------------------------------------------------

inline __attribute__((always_inline)) void MemoryChecker::access(const AccessEvent& e) {
  Worker* w = &e.w;
  if (!w->checking) return;
  Thread& t = e.t;
  const uintptr_t a = e.addr;
  const size_t size = e.size;
  const bool write = e.write, read = e.read, atomic = e.atomic;
  Ctx c;
  c.space = e.space;
  Cell* cells;
  uint16_t* dinit = nullptr;
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
    dinit = d->init;
    c.w = w;
    c.t = &t;
    c.addr = a;
    c.s.pc = e.pc;
    c.s.thread = uint16_t(t.linear);
    if (a < d->data || a + size > d->data + d->bytes) device_out_of_bounds(c, write);
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
  // How the access was made, in the stamp's top pc bits (check.h).
  if (__builtin_expect(e.how | e.scope, 0) || atomic || size > 4) {
    c.s.pc |= (atomic ? uint32_t(e.scope) << kPcScopeShift : 0) | (e.how & kHowVolatile ? kPcStrong : 0) |
              (e.how & kHowReadOnly ? kPcReadOnly : 0) | (size > 4 ? kPcWide : 0);
  }
  // A plain read of a buffer that a `const T* __restrict__` parameter points into: read-only path.
  if (__builtin_expect(!g_chk.restricted.empty(), 0) && c.space == Space::Device && read && !write && !atomic &&
      !(e.how & kHowVolatile))
    for (const auto& r : g_chk.restricted)
      if (r.first == e.region) c.s.pc |= kPcReadOnly;
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
      Facts facts;
      element_facts(facts, x);
      facts.set("size", count);
      out_of_bounds(c, write,
                    strf("%s is outside __shared__ %s, which has %lld element%s (valid indices 0 to %lld)", where_str(x).c_str(),
                         x.array.c_str(), count, count == 1 ? "" : "s", count - 1),
                    facts);
    }
  } else if (c.space == Space::Dynamic) {
    uintptr_t lo = reinterpret_cast<uintptr_t>(w->dyn_start);
    if (a < lo || a + size > lo + w->dyn_bytes) {
      Where x = describe(*w, Space::Dynamic, a);
      long long count = (long long)(w->dyn_bytes / x.elem);
      Facts facts;
      element_facts(facts, x);
      facts.set("size", count).set("dynamic_bytes", w->dyn_bytes);
      if (w->dyn_bytes == 0)
        out_of_bounds(c, write,
                      strf("%s is dynamic shared memory, but the launch asked for none (the third <<<>>> argument sets "
                           "its size in bytes)", where_str(x).c_str()),
                      facts);
      else
      out_of_bounds(c, write,
                    strf("%s is outside the %zu bytes of dynamic shared memory that the launch asked for (%lld element%s, valid "
                         "indices 0 to %lld; the third <<<>>> argument sets the size)",
                         where_str(x).c_str(), w->dyn_bytes, count, count == 1 ? "" : "s", count - 1),
                    facts);
    }
  }
  if (atomic) {
    if (c.space == Space::Device) {
      const bool releases = k.fenced;
      atomic_sync(wc, k, c.s.thread, e.scope);
      // The releasing atomic is part of the release.
      if (releases) c.s.fences = uint8_t(std::min<unsigned>(k.fences - 1u, 255));
    }
    // A CAS validates the plain reads its thread made of these words (a CAS loop).
    if (__builtin_expect(!g_chk.pending.empty(), 0) && (e.how & kHowCas)) settle_pending(wc.run, c.s.thread, a & ~uintptr_t(3), a + size);
  }
  c.via_atomic = atomic || k.did_atomic;
  uintptr_t hi = a + size;
  for (uintptr_t ca = base + ((a - base) & ~uintptr_t(3)); ca < hi; ca += 4) {
    uint32_t m = byte_mask(ca, a, hi);
    // Watch mode (a rerun of a wrong answer): before the cell, so a read sees who wrote the word.
    if (__builtin_expect(g_watch_on, 0))
      watch_access(*w, t, c.space, ca, write, read, c.s.run, c.s.pc, dinit ? dinit + ((ca - base) >> 2) : nullptr);
    check_cell(c, cells[(ca - base) >> 2], m, write, read, dinit ? dinit + ((ca - base) >> 2) : nullptr);
  }
}

}  // namespace detail
}  // namespace cudasim

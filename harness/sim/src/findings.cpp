// The memory checker's findings: hazards and uninitialized reads as they are recorded, the names
// of the elements they touch, and the report with its advice at the end of the checked launch.
#include <algorithm>
#include <climits>

#include <cstdio>

#include "checker_state.h"
#include "cudasim/control.h"
#include "events.h"

namespace cudasim {
namespace detail {

void close_findings(uint32_t run, const char* file, int line) {
  for (auto* list : {&g_chk.hazards, &g_chk.uninit})
    for (Finding& f : *list)
      if (f.open && f.block_b == g_chk.run_block[run - g_chk.first_run]) {
        f.to_file = file;
        f.to_line = line;
        f.open = false;
      }
}

// ---- locating an access -------------------------------------------------------------------------

// Names the element at `a` for a report: the shared array, or the kernel parameter that points
// into the buffer (partials[3], not "buffer #2 + 16 bytes").
Where describe(Worker& w, Space sp, uintptr_t a) {
  Where r{sp, "", 0, 1};
  if (sp == Space::Shared) {
    const SharedArray* best = nullptr;
    for (const SharedArray& s : w.shared_arrays) {
      uintptr_t p = reinterpret_cast<uintptr_t>(s.p);
      if (a >= p && a < p + s.bytes) best = &s;
    }
    if (!best) {  // outside every array: the nearest one, below or above
      long long bestd = LLONG_MAX;
      for (const SharedArray& s : w.shared_arrays) {
        long long p = (long long)reinterpret_cast<uintptr_t>(s.p);
        long long d = (long long)a < p ? p - (long long)a : (long long)a - (p + (long long)s.bytes) + 1;
        if (d < bestd) bestd = d, best = &s;
      }
    }
    if (best) {
      r.array = best->name;
      r.elem = best->elem ? best->elem : 1;
      long long off = (long long)a - (long long)reinterpret_cast<uintptr_t>(best->p);
      r.index = off >= 0 ? off / (long long)r.elem : -((-off + (long long)r.elem - 1) / (long long)r.elem);
    }
    return r;
  }
  if (sp == Space::Dynamic) {
    r.array = w.dyn_name ? w.dyn_name : "dynamic shared memory";
    r.elem = w.dyn_elem ? w.dyn_elem : 1;
    long long off = (long long)a - (long long)reinterpret_cast<uintptr_t>(w.dyn_start);
    r.index = off >= 0 ? off / (long long)r.elem : -((-off + (long long)r.elem - 1) / (long long)r.elem);
    return r;
  }
  // The buffer whose slot holds the address (a past-the-end or negative index stays in its own
  // buffer's slot); in the arena outside every slot, the nearest buffer.
  const Alloc* al = find_alloc_any(reinterpret_cast<void*>(a));
  if (!al && a - g_arena_lo < g_arena_len) al = nearest_alloc(a);
  r.bytes = al && alloc_untyped(*al);
  size_t elem = al && al->elem ? al->elem : 1;
  const ArgName* arg = nullptr;
  // The parameter that points closest below the address into the same buffer; below every
  // such parameter (a negative index), the one that points lowest.
  for (const ArgName& n : g_chk.args)
    if (al && n.ptr >= al->data && n.ptr <= a && (!arg || n.ptr > arg->ptr) && !n.name.empty()) arg = &n;
  if (!arg)
    for (const ArgName& n : g_chk.args)
      if (al && n.ptr >= al->data && n.ptr < al->data + al->bytes && (!arg || n.ptr < arg->ptr) && !n.name.empty())
        arg = &n;
  r.elem = elem;
  uintptr_t base = arg ? arg->ptr : al ? al->data : a;
  r.array = arg ? arg->name : al ? strf("buffer #%d", al->id) : "?";
  long long off = (long long)a - (long long)base;
  r.index = off >= 0 ? off / (long long)elem : -((-off + (long long)elem - 1) / (long long)elem);
  return r;
}

// "partials[3]"; in a buffer of unknown element type, "byte 12 of partials".
std::string where_str(const Where& x) {
  if (x.bytes) return strf("byte %lld of %s", x.index, x.array.c_str());
  return strf("%s[%lld]", x.array.c_str(), x.index);
}

void name_address(Worker& w, int space, uintptr_t a, std::string* array, long long* index, size_t* elem, const char** type) {
  Where x = describe(w, Space(space), a);
  *array = x.array;
  *index = x.index;
  *elem = x.elem;
  const Alloc* al = space == int(Space::Device) ? find_alloc_any(reinterpret_cast<void*>(a)) : nullptr;
  *type = al ? al->type : nullptr;
}

// Whether the reader of a cross-block pair saw the writer's release with its atomic but made no
// acquire after it (the last-block ticket without the reader's fence).
static bool missing_acquire(const Ctx& c, const Stamp& a) {
  const Checker& k = g_chk;
  if (a.run < k.first_run || a.run == c.s.run) return false;
  uint64_t seen = std::max(c.k->seen, c.w->ck->blk_seen);
  for (const Release& r : k.releases[a.run - k.first_run])
    if (r.device && r.seq <= seen && (a.epoch < r.epoch || (a.thread == r.thread && a.fences < r.fences))) return true;
  return false;
}

// How many elements `thread` of block run `run` accessed at the code address `pc` in the barrier
// interval `epoch`, as the shadow of the space around `addr` still shows them (a later write
// forgets the reads before it, so this may count fewer). Shared memory is counted whole; device
// memory in a window of the buffer around the address. For a report only: it scans the shadow.
static int times_in_interval(const Ctx& c, uint32_t run, uint16_t thread, uint32_t epoch, uint32_t pc, uintptr_t skip_word) {
  const Cell* cells = nullptr;
  uintptr_t base = 0;
  size_t n = 0;
  const WorkerCheck& wc = *c.w->ck;
  if (c.space == Space::Shared) cells = wc.sh_shadow, base = c.w->sh_lo, n = c.w->sh_len / 4;
  else if (c.space == Space::Dynamic) cells = wc.dyn_shadow, base = c.w->dyn_lo, n = c.w->dyn_len / 4;
  else
    for (const DevShadow* d : g_chk.devs)
      if (c.addr - d->data < d->bytes && d->cells) cells = d->cells, base = d->data, n = d->ncells;
  if (!cells || c.addr < base) return 0;
  size_t at = (c.addr - base) / 4, lo = 0, hi = n;
  if (c.space == Space::Device) {
    const size_t window = 4096;
    lo = at > window ? at - window : 0;
    hi = std::min(n, at + window);
  }
  int words = 0;
  for (size_t i = lo; i < hi; ++i) {
    if (base + 4 * i == skip_word) continue;
    const Cell& cell = cells[i];
    for (const Stamp* s : {&cell.w, &cell.r1, &cell.r2})
      if (s->run == run && s->thread == thread && s->epoch == epoch && stamp_pc(*s) == pc) {
        ++words;
        break;
      }
  }
  return words;
}

void record_hazard(const Ctx& c, const Stamp& a, const char* kind, HazardClass cls) {
  Checker& k = g_chk;
  ++k.total_hazards;
  const uint32_t pa = stamp_pc(a), pb = stamp_pc(c.s);
  Observers::hazard(*c.w, kind, a.thread, pa, c.s.thread, pb, c.space, c.addr, a.run != c.s.run);
  bool cross = a.run != c.s.run;
  std::string key = strf("%s|%u|%u|%d|%d", kind, pa, pb, int(c.space), int(cls));
  for (Finding& f : k.hazards)
    if (f.key == key) {
      ++f.count;
      return;
    }
  if (k.hazards.size() >= 64) return;
  Finding f;
  f.key = key;
  f.count = 1;
  f.kind = kind;
  f.at = describe(*c.w, c.space, c.addr);
  f.block_a = cross ? k.run_block[a.run - k.first_run] : c.w->block_linear;
  f.block_b = c.w->block_linear;
  f.thread_a = a.thread;
  f.thread_b = c.s.thread;
  f.pc_a = pa;
  f.pc_b = pb;
  f.atomic_a = a.flags & kAtomic;
  f.atomic_b = c.s.flags & kAtomic;
  f.same_warp = !cross && a.thread / 32 == c.s.thread / 32;
  f.cbar = stamp_slot(a) != kNoSlot || stamp_slot(c.s) != kNoSlot;
  f.cross_block = cross;
  f.same_line_rmw = false;
  f.cls = cls;
  f.bits_a = a.pc & ~kPcMask;
  f.bits_b = c.s.pc & ~kPcMask;
  f.missing_acquire = cross && cls == HazardClass::Plain && std::string(kind) == "read-after-write" && missing_acquire(c, a);
  f.block_fence_pc = 0;
  if (cross && cls == HazardClass::Plain && a.run >= k.first_run)
    for (const Release& r : k.releases[a.run - k.first_run])
      if (!r.device && r.block_fence_pc && (a.epoch < r.epoch || (a.thread == r.thread && a.fences < r.fences)))
        f.block_fence_pc = r.block_fence_pc;
  if (cls == HazardClass::ReadOnly)
    for (const auto& r : k.restricted)
      if (c.addr - r.first->data < r.first->bytes) f.restricted = r.second;
  f.epoch = c.s.epoch;
  f.epoch_a = a.epoch;
  if (k.hazards.empty()) {
    // The first finding is the one reported: which loop step each access belongs to (several
    // elements at one line in one interval: the thread ran several steps without a barrier). The
    // current access is not in the shadow yet; the earlier one is, at this word.
    const size_t words = std::max<size_t>(1, (f.at.elem + 3) / 4);
    f.times_a = int(std::max<size_t>(1, times_in_interval(c, a.run, a.thread, a.epoch, pa, 0) / words));
    f.times_b = int(times_in_interval(c, c.s.run, c.s.thread, c.s.epoch, pb, c.addr & ~uintptr_t(3)) / words) + 1;
  }
  f.from_file = c.w->epoch_file;
  f.from_line = c.w->epoch_line;
  f.to_file = nullptr;
  f.to_line = 0;
  f.open = true;
  k.hazards.push_back(f);
}

// Whether plain reads at `pc` are a CAS loop's first read: some thread validated a read made there
// with atomicCAS. A thread that leaves such a loop early (the value already satisfies it, as in an
// atomicMax built from atomicCAS) made the same read.
static bool cas_read_site(uint32_t pc) {
  const auto& v = g_chk.cas_read_sites;
  return std::find(v.begin(), v.end(), pc) != v.end();
}

void defer_hazard(const Ctx& c, const Stamp& a, const char* kind, uint32_t run, uint16_t thread) {
  Checker& k = g_chk;
  const uint32_t read_pc = kind[0] == 'r' ? stamp_pc(c.s) : stamp_pc(a);
  if (cas_read_site(read_pc)) return;
  // The reader's block has ended: it can no longer validate the read.
  if (run != c.s.run && (run < k.first_run || k.run_done[run - k.first_run])) {
    record_hazard(c, a, kind, HazardClass::PlainVsAtomic);
    return;
  }
  const uintptr_t word = c.addr & ~uintptr_t(3);
  for (const PendingRead& p : k.pending)
    if (p.run == run && p.thread == thread && p.word == word && p.a.pc == a.pc && p.s.pc == c.s.pc && p.kind == kind) return;
  if (k.pending.size() >= (1u << 16)) return;  // only hides a report
  k.pending.push_back(PendingRead{run, thread, c.space, word, a, c.s, c.addr, c.w, kind, read_pc});
}

void settle_pending(uint32_t run, uint16_t thread, uintptr_t lo, uintptr_t hi) {
  auto& v = g_chk.pending;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const PendingRead& p) {
                           if (p.run != run || p.thread != thread || p.word < lo || p.word >= hi) return false;
                           if (!cas_read_site(p.read_pc)) g_chk.cas_read_sites.push_back(p.read_pc);
                           return true;
                         }),
          v.end());
}

void report_pending(uint32_t run) {
  auto& v = g_chk.pending;
  if (v.empty()) return;
  std::vector<PendingRead> mine;
  for (const PendingRead& p : v)
    if (p.run == run) mine.push_back(p);
  v.erase(std::remove_if(v.begin(), v.end(), [&](const PendingRead& p) { return p.run == run; }), v.end());
  for (const PendingRead& p : mine) {
    if (cas_read_site(p.read_pc)) continue;
    Ctx c{};
    c.w = p.w;
    c.k = &p.w->ck->threads[p.s.thread];
    c.s = p.s;
    c.space = p.space;
    c.addr = p.addr;
    record_hazard(c, p.a, p.kind, HazardClass::PlainVsAtomic);
  }
}

void record_uninit(const Ctx& c) {
  Checker& k = g_chk;
  ++k.total_uninit;
  const uint32_t pc = stamp_pc(c.s);
  Observers::uninit(*c.w, c.s.thread, pc, c.space, c.addr);
  std::string key = strf("%u|%d", pc, int(c.space));
  for (Finding& f : k.uninit)
    if (f.key == key) {
      ++f.count;
      return;
    }
  if (k.uninit.size() >= 16) return;
  Finding f{};
  f.key = key;
  f.count = 1;
  f.kind = "uninitialized read";
  f.at = describe(*c.w, c.space, c.addr);
  f.block_a = f.block_b = c.w->block_linear;
  f.thread_a = f.thread_b = c.s.thread;
  f.pc_a = f.pc_b = pc;
  f.epoch = c.s.epoch;
  f.from_file = c.w->epoch_file;
  f.from_line = c.w->epoch_line;
  f.open = true;
  k.uninit.push_back(f);
}

// ---- reports ----------------------------------------------------------------------------------

static std::string interval_str(const Finding& f) {
  std::string from = f.from_file ? "the barrier at " + where(f.from_file, f.from_line) : "the kernel's start";
  std::string to = f.to_file ? "the barrier at " + where(f.to_file, f.to_line) : "the block's end";
  return "between " + from + " and " + to;
}

// Whether one source line both reads and writes one element from many threads (acc += x): the
// hazards then include a write-after-write between two executions of that line.
static bool accumulator(const Finding& f) {
  if (symbolized_site(f.pc_a) != symbolized_site(f.pc_b)) return false;
  for (const Finding& h : g_chk.hazards)
    if (h.kind == "write-after-write" && symbolized_site(h.pc_a) == symbolized_site(f.pc_a) && symbolized_site(h.pc_b) == symbolized_site(f.pc_a)) return true;
  return false;
}

// Whether some hazard at the finding's line involves a read (`sum += x`): an accumulator. Only
// writes (`out[0] = v` by every thread) are one value stored many times instead.
static bool read_at_line(const Finding& f) {
  const std::string site = symbolized_site(f.pc_a);
  for (const Finding& h : g_chk.hazards)
    if (h.kind != "write-after-write" && (symbolized_site(h.pc_a) == site || symbolized_site(h.pc_b) == site)) return true;
  return false;
}

static const char* const kOneWriter =
    "Every thread stores to the same element, so the last store wins, and which one is last depends on the order. If one "
    "value is meant (the block's result), let one thread store it: `if (threadIdx.x == 0) out[blockIdx.x] = ...;`. If "
    "every thread's value counts, give each thread its own element, or combine the values (atomicAdd, a reduction).";

static uint3 block_index(uint32_t block) {
  const Grid& g = *g_chk.grid;
  return uint3{block % g.grid.x, (block / g.grid.x) % g.grid.y, block / (g.grid.x * g.grid.y)};
}

static uint3 thread_index(uint16_t thread) {
  const Grid& g = *g_chk.grid;
  return uint3{thread % g.block.x, (thread / g.block.x) % g.block.y, thread / (g.block.x * g.block.y)};
}

static std::string advice(const Finding& f) {
  switch (f.cls) {
    case HazardClass::Scope:
      return "atomicAdd_block and the other _block atomics (and cuda::thread_scope_block) are atomic only among the threads "
             "of one block: threads of another block that update the same element race with them. Use atomicAdd (or the "
             "atomic without _block, cuda::thread_scope_device) when more than one block updates it.";
    case HazardClass::MixedSize:
      return "Two atomic (or volatile) accesses are atomic with respect to each other only when they cover the same bytes: "
             "a wider read of a word written by narrower atomics (a flag half, then a value half) can see one half without "
             "the other. Write and read the whole word with one atomic of the same size (pack the flag and the value into "
             "one 64-bit atomicExch or atomicCAS).";
    case HazardClass::PlainVsAtomic:
      return "A plain load of an element that another thread updates with an atomic, with no order between them, is a "
             "data race (PTX memory model): it may see a stale or torn value. Read it with an atomic (atomicAdd(p, 0), "
             "cuda::atomic_ref::load) or a volatile load of the same size, or order the two; a CAS loop that validates the "
             "plain read with atomicCAS is fine.";
    case HazardClass::ReadOnly:
      if (!f.restricted.empty())
        return "The kernel's parameter " + f.restricted +
               " is a pointer to const declared __restrict__: that promises nvcc the data does not change during the launch, "
               "so it may load it through the read-only data cache (as __ldg does), which is not coherent with writes made "
               "during the launch, and fences do not make it so. Another block writes these bytes in this launch: drop "
               "__restrict__ (or const) from " + f.restricted + ", or split the work into two kernel launches.";
      return "__ldg (like a const __restrict__ pointer) reads through the read-only data cache, which is not coherent with "
             "writes made during the launch, and fences do not make it so: use it only for data no thread writes in this "
             "launch. Use a plain load here (or a volatile load or an atomic), or split the work into two kernel launches.";
    case HazardClass::Plain: break;
  }
  if (f.missing_acquire)
    return "The writer published its data with a release (__threadfence(), then the atomic), and the reader's atomic saw it, "
           "but the reader made no acquire. The checker follows the PTX memory model, more strictly than NVIDIA's "
           "threadFenceReduction sample: a release pattern synchronizes only with an acquire pattern on the reader's side "
           "(PTX ISA, Memory Consistency Model: an atomic followed by a fence, or an acquire operation). Add a "
           "__threadfence() after the atomic, in the thread that then reads (before the __syncthreads() that passes the "
           "result to the block).";
  if (f.cross_block && f.block_fence_pc)
    return "The writer's fence at " + symbolized_site(f.block_fence_pc) +
           " is __threadfence_block(): it orders the thread's writes only for the threads of its own block, so the atomic "
           "after it publishes nothing to another block. Use __threadfence() there (device scope), and __threadfence() "
           "after the reader's atomic that observed it.";
  if (accumulator(f) && !read_at_line(f)) return kOneWriter;
  if (f.cross_block) {
    if (accumulator(f))
      return "Many threads update the same element: use atomicAdd (or another atomic) for a shared total, or give each "
             "thread its own element and reduce them.";
    return "Blocks run in no fixed order and see each other's plain writes only through a release and an acquire: the writer "
           "calls __threadfence() before the atomic that announces its data, and the reader calls __threadfence() after the "
           "atomic that observed it. Otherwise split the work into two kernel launches.";
  }
  if (accumulator(f))
    return "Many threads update the same element: use atomicAdd (or another atomic), or a reduction tree in which each thread "
           "owns one element per step.";
  if (f.cbar)
    return "With cuda::barrier, what a thread does after arrive() belongs to the next phase: write your element before "
           "arrive(), and read the other threads' elements only after wait() returns.";
  const dim3 b = g_chk.grid->block;
  if (f.same_warp && b.x * b.y * b.z > 32)  // in a one-warp block, __syncthreads() is the lesson
    return "The lanes of a warp do not run in lockstep (since Volta): put __syncwarp() between the write and the read, or "
           "exchange values with __shfl_down_sync().";
  // The first schedule runs threads in order, each to its next barrier. A read and then a write
  // by a later thread at one line (`sdata[tid] += sdata[tid + s]`) is a loop whose steps have no
  // barrier between them: thread 0 ran ahead into later steps and read an element before its
  // owner updated it. (A scan step that reads and writes in one interval is read-after-write.)
  // When neither thread ran the line more than once between the two barriers, both accesses were
  // in one step: two active threads' elements overlap (`tid % 2 * s` for `tid % (2 * s)`).
  if (f.kind == "write-after-read" && symbolized_site(f.pc_a) == symbolized_site(f.pc_b)) {
    if (f.times_a > 1 || f.times_b > 1)
      return "The threads were in different steps of the loop: one read an element before its owner had updated it for an "
             "earlier step. End every step with __syncthreads() inside the loop, so that no thread starts the next step "
             "before all have finished this one.";
    const Grid& g = *g_chk.grid;
    return strf("Both accesses were in the same step of the loop (between the same two barriers): thread %s read %s, and "
                "thread %s, also active in that step, wrote it. In one step, the elements a thread reads must be ones that no "
                "active thread writes in that step: check which threads the condition lets in, and the index arithmetic.",
                dim_str(thread_index(f.thread_a), g.block).c_str(), where_str(f.at).c_str(),
                dim_str(thread_index(f.thread_b), g.block).c_str());
  }
  if (f.kind == "write-after-read" || symbolized_site(f.pc_a) == symbolized_site(f.pc_b))
    return "One step both reads elements that other threads write and writes its own: read into a register, __syncthreads(), "
           "then write, then __syncthreads() again (or write into a second buffer).";
  return "A thread read an element that another thread writes in the same step: put a __syncthreads() between the write and "
         "the read (read, barrier, write, barrier).";
}

static std::string who_str(uint32_t block, uint16_t thread) {
  const Grid& g = *g_chk.grid;
  return strf("block %s thread %s", dim_str(block_index(block), g.grid).c_str(), dim_str(thread_index(thread), g.block).c_str());
}

// The diagnosis of the first finding: its block (the second access's), threads and sites.
static Diagnosis finding_diagnosis(Kind kind, const Finding& f, bool two) {
  Diagnosis d;
  d.kind = kind;
  d.sites.push_back(symbolized_site(f.pc_a));
  d.has_block = true;
  d.block = block_index(f.block_b);
  d.threads.push_back(thread_index(f.thread_a));
  if (two) {
    d.sites.push_back(symbolized_site(f.pc_b));
    d.threads.push_back(thread_index(f.thread_b));
  }
  return d;
}

// "atomic ", "block-scope atomic ", "volatile ", "read-only-path " or "": how an access was made.
// Volatile is named only where it matters (against an atomic): between plain and volatile
// accesses it changes nothing.
static const char* how_word(bool atomic, uint32_t bits, HazardClass cls) {
  if (atomic) {
    unsigned scope = bits >> kPcScopeShift;
    return scope == kScopeBlock ? "block-scope atomic " : scope == kScopeThread ? "thread-scope atomic " : "atomic ";
  }
  if ((bits & kPcStrong) && (cls == HazardClass::MixedSize || cls == HazardClass::PlainVsAtomic)) return "volatile ";
  if (bits & kPcReadOnly) return "read-only-path (__ldg) ";
  return "";
}

static const char* verb(const std::string& kind, bool first, bool atomic) {
  // read-after-write: the first access wrote, the second read.
  bool wrote = first ? kind != "write-after-read" : kind != "read-after-write";
  if (atomic) return wrote ? "atomically updated" : "atomically read";
  return wrote ? "wrote" : "read";
}

// ---- the diagnosis record's facts ----------------------------------------------------------------

// "atomic", "block_atomic", "thread_atomic", "volatile", "ldg" or "": how_word as a fact.
static const char* how_fact(bool atomic, uint32_t bits, HazardClass cls) {
  if (atomic) {
    unsigned scope = bits >> kPcScopeShift;
    return scope == kScopeBlock ? "block_atomic" : scope == kScopeThread ? "thread_atomic" : "atomic";
  }
  if ((bits & kPcStrong) && (cls == HazardClass::MixedSize || cls == HazardClass::PlainVsAtomic)) return "volatile";
  if (bits & kPcReadOnly) return "ldg";
  return "";
}

static const char* class_fact(HazardClass cls) {
  switch (cls) {
    case HazardClass::Scope: return "scope";
    case HazardClass::MixedSize: return "mixed_size";
    case HazardClass::PlainVsAtomic: return "plain_vs_atomic";
    case HazardClass::ReadOnly: return "read_only";
    case HazardClass::Plain: break;
  }
  return "plain";
}

static std::string site_or_null(const char* file, int line) { return file ? json_quote(where(file, line)) : "null"; }

void element_facts(Facts& f, const Where& x) {
  f.set("array", x.array).set("index", x.index);
  if (x.bytes) f.set("bytes_index", true);
}

// The facts every report of the checker has: the kernel, its launch, the shapes and the space.
static void checker_facts(Facts& f, const Grid& g, Space sp) {
  f.set("kernel", g.site.kernel).set("launch_site", where(g.site.file, g.site.line));
  f.set("grid_dim", uint3{g.grid.x, g.grid.y, g.grid.z}).set("block_dim", uint3{g.block.x, g.block.y, g.block.z});
  f.set("block_threads", (long long)g.block.x * g.block.y * g.block.z);
  f.set("space", sp == Space::Device ? "device" : "shared");
  if (sp == Space::Dynamic) f.set("dynamic_shared", true);
}

// The uninitialized reads' facts: what uninit_shared/uninit_device render, and, beside a race, the
// race's "uninit" fact.
static Facts uninit_facts(const Grid& g) {
  const Checker& k = g_chk;
  const Finding& f = k.uninit.front();
  Facts u;
  checker_facts(u, g, f.at.space);
  u.set("reads", k.total_uninit);
  std::vector<std::pair<std::string, int>> lines;
  for (const Finding& x : k.uninit) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](auto& l) { return l.first == symbolized_site(x.pc_a); });
    if (it == lines.end()) lines.push_back({symbolized_site(x.pc_a), x.count});
    else it->second += x.count;
  }
  std::string json;
  for (auto& l : lines) json += strf("%s{\"site\": %s, \"count\": %d}", json.empty() ? "" : ", ", json_quote(l.first).c_str(), l.second);
  u.set_json("read_sites", "[" + json + "]");
  element_facts(u, f.at);
  u.set("site", symbolized_site(f.pc_a)).set("block", block_index(f.block_a)).set("thread", thread_index(f.thread_a));
  u.set("epoch", (long long)f.epoch);
  u.set_json("interval_from", site_or_null(f.from_file, f.from_line)).set_json("interval_to", site_or_null(f.to_file, f.to_line));
  return u;
}

// The hazards' facts: each pair of lines, the first finding's two accesses, its element and interval,
// and what the advice rules (scripts/puzzlelib/diagnosis_races.py) decide on.
static void hazard_facts(Facts& d, const Grid& g) {
  const Checker& k = g_chk;
  const Finding& f = k.hazards.front();
  checker_facts(d, g, f.at.space);
  d.set("hazards", k.total_hazards);
  std::vector<std::pair<std::string, int>> pairs;  // the pair's JSON without its count, and the count
  for (const Finding& h : k.hazards) {
    std::string how_a = how_fact(h.atomic_a, h.bits_a, h.cls), how_b = how_fact(h.atomic_b, h.bits_b, h.cls);
    // As the English line: the first read-only-path access is named after the __restrict__ parameter.
    if (!h.restricted.empty()) {
      if (how_a == "ldg") how_a = "restrict";
      else if (how_b == "ldg") how_b = "restrict";
    }
    std::string p = strf("\"hazard\": %s, \"first\": %s, \"first_how\": %s, \"first_site\": %s, \"second\": %s, "
                         "\"second_how\": %s, \"second_site\": %s",
                         json_quote(h.kind).c_str(), json_quote(h.kind == "write-after-read" ? "read" : "write").c_str(),
                         json_quote(how_a).c_str(), json_quote(symbolized_site(h.pc_a)).c_str(),
                         json_quote(h.kind == "read-after-write" ? "read" : "write").c_str(), json_quote(how_b).c_str(),
                         json_quote(symbolized_site(h.pc_b)).c_str());
    if (!h.restricted.empty()) p += ", \"restricted\": " + json_quote(h.restricted);
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](auto& x) { return x.first == p; });
    if (it == pairs.end()) pairs.push_back({p, h.count});
    else it->second += h.count;
  }
  std::string json;
  for (auto& p : pairs) json += strf("%s{%s, \"count\": %d}", json.empty() ? "" : ", ", p.first.c_str(), p.second);
  d.set_json("pairs", "[" + json + "]");
  // The first finding: who did what, where, and between which barriers.
  d.set("hazard", f.kind);
  element_facts(d, f.at);
  d.set("access_first", f.kind == "write-after-read" ? "read" : "write");
  d.set("access_second", f.kind == "read-after-write" ? "read" : "write");
  d.set("atomic_first", f.atomic_a).set("atomic_second", f.atomic_b);
  d.set("block_first", block_index(f.block_a));
  d.set("class", class_fact(f.cls));
  d.set("cross_block", f.cross_block).set("same_warp", f.same_warp).set("cbar", f.cbar);
  d.set("accumulator", accumulator(f)).set("read_at_line", read_at_line(f));
  d.set("missing_acquire", f.missing_acquire);
  if (f.block_fence_pc) d.set("block_fence_site", symbolized_site(f.block_fence_pc));
  if (!f.restricted.empty()) d.set("restricted", f.restricted);
  d.set("epoch_first", (long long)f.epoch_a).set("epoch_second", (long long)f.epoch);
  if (f.times_a) d.set("times_first", f.times_a).set("times_second", f.times_b);
  d.set_json("interval_from", site_or_null(f.from_file, f.from_line)).set_json("interval_to", site_or_null(f.to_file, f.to_line));
}

std::string check_launch_end(Grid& g, Diagnosis* d) {
  Checker& k = g_chk;
  if (!k.active) return "";
  k.active = false;
  if (k.hazards.empty() && k.uninit.empty()) return "";
  std::vector<uint32_t> pcs;
  for (auto* list : {&k.hazards, &k.uninit})
    for (const Finding& f : *list) {
      pcs.push_back(f.pc_a), pcs.push_back(f.pc_b);
      if (f.block_fence_pc) pcs.push_back(f.block_fence_pc);
    }
  symbolize_sites(pcs);
  std::string out;
  if (!k.hazards.empty()) {
    const Finding& f0 = k.hazards.front();
    Kind kind = f0.at.space == Space::Device ? Kind::race_device : Kind::race_shared;
    if (f0.cls == HazardClass::Scope) kind = Kind::race_atomic_scope;
    else if (f0.cls == HazardClass::MixedSize || f0.cls == HazardClass::PlainVsAtomic) kind = Kind::race_mixed_access;
    else if (f0.cls == HazardClass::ReadOnly) kind = Kind::race_read_only;
    *d = finding_diagnosis(kind, f0, true);
    hazard_facts(d->facts, g);
    if (!k.uninit.empty()) d->facts.set_json("uninit", uninit_facts(g).json());
    out = strf("race in %s: %d hazard%s on %s.\n", kernel_str(g.site).c_str(), k.total_hazards, k.total_hazards == 1 ? "" : "s",
               space_word(f0.at.space));
    // One line per pair of source lines (several instructions of one line count together).
    std::vector<std::pair<std::string, int>> lines;
    for (const Finding& f : k.hazards) {
      const char* a = f.kind == "write-after-read" ? "read" : "write";
      const char* b = f.kind == "read-after-write" ? "read" : "write";
      std::string l = strf("  %s between %s%s at %s and %s%s at %s", f.kind.c_str(), how_word(f.atomic_a, f.bits_a, f.cls), a,
                           symbolized_site(f.pc_a).c_str(), how_word(f.atomic_b, f.bits_b, f.cls), b, symbolized_site(f.pc_b).c_str());
      const std::string ldg = "read-only-path (__ldg) ";
      if (!f.restricted.empty() && l.find(ldg) != std::string::npos)
        l.replace(l.find(ldg), ldg.size(), "read-only-path (const __restrict__ " + f.restricted + ") ");
      auto it = std::find_if(lines.begin(), lines.end(), [&](auto& x) { return x.first == l; });
      if (it == lines.end()) lines.push_back({l, f.count});
      else it->second += f.count;
    }
    for (auto& l : lines) out += strf("%s [%d hazard%s]\n", l.first.c_str(), l.second, l.second == 1 ? "" : "s");
    const Finding& f = f0;
    std::string arr = (f.at.space == Space::Device ? "" : "__shared__ ") + where_str(f.at);
    out += strf("  first: %s %s %s at %s, then %s %s it at %s", who_str(f.block_a, f.thread_a).c_str(),
                verb(f.kind, true, f.atomic_a), arr.c_str(), symbolized_site(f.pc_a).c_str(), who_str(f.block_b, f.thread_b).c_str(),
                verb(f.kind, false, f.atomic_b), symbolized_site(f.pc_b).c_str());
    if (f.cls == HazardClass::ReadOnly) out += ",\n         in another block of the same launch (the read-only path is not coherent with it).\n";
    else if (f.cls == HazardClass::Scope) out += ",\n         in another block, which a block-scope atomic does not synchronise with.\n";
    else if (f.cross_block) out += ",\n         in another block, with no release and acquire between them.\n";
    else out += strf(",\n         with no barrier between them (%s).\n", interval_str(f).c_str());
    out += "  " + advice(f) + "\n";
  }
  if (!k.uninit.empty()) {
    const Finding& f = k.uninit.front();
    if (k.hazards.empty()) {
      *d = finding_diagnosis(f.at.space == Space::Device ? Kind::uninit_device : Kind::uninit_shared, f, false);
      d->facts = uninit_facts(g);
    }
    out += strf("%s in %s: %d read%s of %s that nothing wrote.\n", k.hazards.empty() ? "uninitialized read" : "also: uninitialized read",
                kernel_str(g.site).c_str(), k.total_uninit, k.total_uninit == 1 ? "" : "s", space_word(f.at.space));
    std::vector<std::pair<std::string, int>> lines;
    for (const Finding& u : k.uninit) {
      auto it = std::find_if(lines.begin(), lines.end(), [&](auto& x) { return x.first == symbolized_site(u.pc_a); });
      if (it == lines.end()) lines.push_back({symbolized_site(u.pc_a), u.count});
      else it->second += u.count;
    }
    for (auto& l : lines) out += strf("  read at %s [%d time%s]\n", l.first.c_str(), l.second, l.second == 1 ? "" : "s");
    std::string arr = (f.at.space == Space::Device ? "" : "__shared__ ") + where_str(f.at);
    out += strf("  first: %s read %s at %s (%s), before any thread %s it.\n", who_str(f.block_a, f.thread_a).c_str(),
                arr.c_str(), symbolized_site(f.pc_a).c_str(), interval_str(f).c_str(),
                f.at.space == Space::Device ? "or cudaMemcpy/cudaMemset wrote" : "of the block wrote");
    out += f.at.space == Space::Device
               ? "  cudaMalloc memory holds garbage: write every element before a kernel reads it (cudaMemcpy, cudaMemset or a "
                 "kernel), or guard the read with the bounds check.\n"
               : "  Shared memory starts as garbage in every block: write every element a thread will read (padding too, with "
                 "the operation's identity, e.g. 0 for a sum or -FLT_MAX for a max), or guard the read.\n";
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  // Outside the puzzles, an uninitialized read alone does not stop the program: the garbage may
  // never reach an output. It is a warning (once per launch site), and the schedule comparison
  // decides: each schedule fills shared memory with different garbage.
  if (k.hazards.empty() && !options().undefined_values_are_errors) {
    std::string site = where(g.site.file, g.site.line);
    if (std::find(k.uninit_warned.begin(), k.uninit_warned.end(), site) == k.uninit_warned.end()) {
      k.uninit_warned.push_back(site);
      std::fprintf(stderr,
                   "cudasim: warning: %s\n  The program goes on: if the garbage reaches device memory, the thread orders "
                   "write different results and that is reported as a race.\n",
                   out.c_str());
    }
    return "";
  }
  return out;
}

// The running thread's error, with its record's facts: recorded first, so that thread_fault_ext's
// own record (the same kind, site, block and thread, without facts) does not replace it.
[[noreturn]] static void fault_with_facts(Ctx& c, Kind kind, const std::string& msg, const std::string& site, Facts facts) {
  const Grid& g = *c.w->grid;
  facts.set("kernel", g.site.kernel).set("launch_site", where(g.site.file, g.site.line));
  facts.set("grid_dim", uint3{g.grid.x, g.grid.y, g.grid.z}).set("block_dim", uint3{g.block.x, g.block.y, g.block.z});
  facts.set("block_threads", (long long)g.block.x * g.block.y * g.block.z);
  Diagnosis d(kind);
  if (!site.empty()) d.sites.push_back(site);
  d.has_block = true;
  d.block = c.w->block.bid;
  d.threads.push_back(c.t->view.tid);
  d.facts = facts;
  c.w->grid->fail(d, msg);
  thread_fault_ext(*c.w, *c.t, kind, msg, site);
}

void device_out_of_bounds(Ctx& c, bool write) {
  const uintptr_t a = c.addr;
  const Alloc* al = find_alloc_any(reinterpret_cast<void*>(a));
  if (!al) {
    if (const Alloc* f = freed_alloc(a)) {
      std::string site = site_of(c.s.pc);
      long long off = (long long)a - (long long)f->data;
      const bool bytes = alloc_untyped(*f) || off < 0 || off % (long long)f->elem;
      std::string at = bytes ? strf("byte %lld", off) : strf("element [%lld]", off / (long long)f->elem);
      Facts facts;
      facts.set("access", write ? "write" : "read").set("space", "device").set("site", site);
      facts.set("index", bytes ? off : off / (long long)f->elem);
      if (bytes) facts.set("bytes_index", true);
      facts.set_json("buffer", alloc_json(*f)).set("free_site", where(f->free_file, f->free_line));
      fault_with_facts(c, Kind::use_after_free,
                       strf("use after free: %s of device memory in %s, block %s, thread %s, at %s: %s of %s, which cudaFree "
                            "released at %s.\n  Call cudaFree only after the last kernel that uses the buffer, and do not use "
                            "a pointer into it afterwards.",
                            write ? "write" : "read", kernel_str(c.w->grid->site).c_str(),
                            dim_str(c.w->block.bid, c.w->block.gdim).c_str(), dim_str(c.t->view.tid, c.w->block.bdim).c_str(),
                            site.c_str(), at.c_str(), alloc_str(*f).c_str(), where(f->free_file, f->free_line).c_str()),
                       site, facts);
    }
  }
  const bool nearest = !al;
  if (!al) al = nearest_alloc(a);
  if (!al) {
    Facts facts;
    facts.set("no_buffer", true).set("address", strf("%p", reinterpret_cast<void*>(a)));
    out_of_bounds(c, write, strf("the address %p is device memory, but no buffer is allocated", reinterpret_cast<void*>(a)),
                  facts);
  }
  Where x = describe(*c.w, Space::Device, a);
  Facts facts;
  element_facts(facts, x);
  facts.set_json("buffer", alloc_json(*al));
  std::string what;
  if (x.bytes) {
    what = strf("%s is outside the buffer, which has %zu byte%s (valid offsets 0 to %lld; it came from an untyped cudaMalloc, so "
                "offsets are in bytes)", where_str(x).c_str(), al->bytes, al->bytes == 1 ? "" : "s", (long long)al->bytes - 1);
    facts.set("size", al->bytes);
  } else {
    size_t count = al->bytes / x.elem;
    what = strf("%s is outside the buffer, which has %zu element%s (valid indices 0 to %lld)", where_str(x).c_str(), count,
                count == 1 ? "" : "s", (long long)count - 1);
    facts.set("size", count);
  }
  // Beyond the buffer's own pages, the index alone hides how far: say it in bytes, and which buffer.
  std::string far = alloc_distance(*al, a);
  if (!far.empty()) {
    what += strf(": %s; %s is %s%s", far.c_str(), x.array.compare(0, 8, "buffer #") == 0 ? "it" : x.array.c_str(),
                 alloc_str(*al).c_str(),
                 nearest ? ", the nearest buffer (no buffer is at that address)" : "");
    facts.set("distance", (long long)(a < al->data ? al->data - a : a - (al->data + al->bytes)));
    facts.set("distance_side", a < al->data ? "before" : "after");
    if (nearest) facts.set("nearest", true);
  }
  out_of_bounds(c, write, what, facts);
}

void out_of_bounds(Ctx& c, bool write, const std::string& what, Facts facts) {
  std::string site = site_of(stamp_pc(c.s));
  facts.set("access", write ? "write" : "read");
  facts.set("space", c.space == Space::Device ? "device" : "shared");
  if (c.space == Space::Dynamic) facts.set("dynamic_shared", true);
  facts.set("site", site);
  fault_with_facts(c, Kind::out_of_bounds,
                   strf("out-of-bounds %s of %s in %s, block %s, thread %s, at %s: %s.\n"
                        "  Check the index against the array's size on both sides: a guard such as `i >= offset` before "
                        "reading [i - offset], and `i < n` before [i].",
                        write ? "write" : "read", space_word(c.space), kernel_str(c.w->grid->site).c_str(),
                        dim_str(c.w->block.bid, c.w->block.gdim).c_str(), dim_str(c.t->view.tid, c.w->block.bdim).c_str(),
                        site.c_str(), what.c_str()),
                   site, facts);
}

}  // namespace detail
}  // namespace cudasim

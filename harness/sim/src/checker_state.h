// The memory checker's state, shared by its files: the device buffers and their shadows
// (shadow.cpp), the launch being checked (hazards.cpp) and its findings (findings.cpp). Internal.
#pragma once

#include "private.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "check.h"
#include "internal.h"

namespace cudasim {
namespace detail {

// ---- device memory shadows (shadow.cpp) ---------------------------------------------------------

struct DevShadow {
  uintptr_t data;
  size_t bytes;
  int id;
  uintptr_t map_lo, map_hi;  // the buffer's slot in the arena: the gaps around it, front canaries, data, slack
  Cell* cells;     // the checker's cells, touched only where a checked kernel accesses (null with the checks off)
  size_t ncells;
  uint16_t* init;  // per word: which bytes hold a value and who wrote them (DevInit; null with the checks off)
};
extern std::mutex g_dev_mu;
extern std::map<uintptr_t, DevShadow> g_dev;  // by data address

// Shadow cells for n words, zeroed (anonymous memory, mapped on first touch).
Cell* map_cells(size_t n);
static inline uint32_t byte_mask(uintptr_t cell_addr, uintptr_t lo, uintptr_t hi) {
  uintptr_t a = std::max(cell_addr, lo), b = std::min(cell_addr + 4, hi);
  return a < b ? (((1u << (b - a)) - 1) << (a - cell_addr)) : 0;
}
static inline uint32_t writers_of(uint32_t mask, unsigned kind) {
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i)
    if (mask & (1u << i)) w |= kind << (8 + 2 * i);
  return w;
}
static inline uint32_t set_dev_init(uint32_t init, uint32_t mask, unsigned kind) {
  uint32_t keep = 0;
  for (int i = 0; i < 4; ++i)
    if (!(mask & (1u << i))) keep |= 3u << (8 + 2 * i);
  return (init & (keep | 0xfu)) | mask | writers_of(mask, kind);
}

// ---- the launch being checked ------------------------------------------------------------------

struct Release {  // a fence followed by an atomic: the block's earlier writes are published
  uint64_t seq;
  uint32_t epoch;  // writes of the block in earlier barrier intervals are covered
  uint16_t thread;
  uint16_t fences;  // and the releasing thread's own writes made before its fence
  bool device;      // device scope (fence and atomic): also for other blocks; else for the block's own threads
  uint32_t block_fence_pc;  // not device scope because of a __threadfence_block() here (0: a _block atomic)
};
// What a hazard is, beyond its read/write kind: each class has its own advice and diagnosis kind.
enum class HazardClass : uint8_t {
  Plain,          // two accesses, at least one a plain write, unordered
  Scope,          // an atomic whose scope (block) does not contain the other thread
  MixedSize,      // two strong accesses (atomic, volatile) that overlap without covering the same bytes
  ReadOnly,       // a read-only-path load of bytes another block of the launch writes
  PlainVsAtomic,  // a plain read and an atomic write, unordered, and no CAS validated the read
};
// A plain read that met an unordered atomic write: a race unless the reading thread validates the
// value with an atomicCAS on the same word later in its block (a CAS loop). Made only when such a
// conflict was found; settled at the reader's CAS or its block's end.
struct PendingRead {
  uint32_t run;  // the reading thread's block run and thread
  uint16_t thread;
  Space space;
  uintptr_t word;  // the word's address
  Stamp a;         // the earlier access of the pair, and the later one with where it happened
  Stamp s;
  uintptr_t addr;
  Worker* w;
  const char* kind;
  uint32_t read_pc;  // the plain read's code address (kPcMask)
};
struct ArgName {
  uintptr_t ptr;
  std::string name;
};
struct Where {  // a location, for reports
  Space space;
  std::string array;  // "temp", "out", ...
  long long index;
  size_t elem;
  bool bytes = false;  // index counts bytes: a buffer from an untyped cudaMalloc (void**)
};
struct Finding {
  std::string key;
  int count = 0;
  // first instance
  std::string kind;  // "read-after-write" ...
  Where at;
  uint32_t block_a, block_b;  // linear block indices (the same unless across blocks)
  uint16_t thread_a, thread_b;
  uint32_t pc_a, pc_b;
  bool atomic_a, atomic_b;
  bool same_warp, cbar, cross_block, same_line_rmw;
  HazardClass cls;
  uint32_t bits_a, bits_b;  // the kPc* bits of the two accesses (how each was made)
  bool missing_acquire;     // across blocks: the reader's atomic saw the writer's release, but no acquire followed
  std::string restricted;   // a read-only-path read through this `const T* __restrict__` parameter ("": __ldg)
  uint32_t block_fence_pc;  // across blocks: the writer released with this __threadfence_block() (0: none)
  uint32_t epoch;    // the barrier interval of the second access (the first's, epoch_a, is the same within a block)
  uint32_t epoch_a;
  // How many elements each thread accessed at its access's code address in this barrier interval,
  // as the shadow still shows them (the first finding only; 0: not counted). More than one: the
  // thread ran that line several times between two barriers, i.e. several steps of a loop.
  int times_a = 0, times_b = 0;
  const char* from_file;
  int from_line;
  const char* to_file;
  int to_line;
  bool open;  // the interval has not ended yet
};
struct Checker {
  bool active = false;
  const Grid* grid = nullptr;
  uint32_t next_run = 1;
  uint32_t first_run = 1;
  std::vector<uint32_t> run_block;             // block linear index per run of this launch
  std::vector<std::vector<Release>> releases;  // per run of this launch
  uint64_t rel_seq = 0;
  std::vector<ArgName> args;
  std::vector<DevShadow*> devs;  // sorted by data
  DevShadow* mru = nullptr;  // the two buffers used last: most kernels read one and write another
  DevShadow* mru2 = nullptr;
  std::vector<Finding> hazards, uninit;
  int total_hazards = 0, total_uninit = 0;
  std::vector<uint8_t> run_done;      // per run of this launch: the block has ended
  std::vector<PendingRead> pending;   // plain reads that met an atomic write (PendingRead)
  std::vector<uint32_t> cas_read_sites;  // read sites (pc) whose reads a CAS validated: a CAS loop's first read
  // Buffers that a `const T* __restrict__` parameter points into, and the parameter: plain reads of
  // them are read-only-path loads (nvcc may make them LDG.NC, as for __ldg).
  std::vector<std::pair<DevShadow*, std::string>> restricted;
  std::vector<std::string> uninit_warned;  // launch sites whose uninitialized read was a warning already
};
extern Checker g_chk;  // hazards.cpp

inline const char* space_word(Space s) { return s == Space::Device ? "device memory" : "shared memory"; }

// One access being checked (hazards.cpp).
struct Ctx {
  Worker* w;
  Thread* t;
  ThreadCheck* k;  // the checker's state of thread t
  Stamp s;
  Space space;
  uintptr_t addr;
  bool via_atomic;  // a store whose value or index may have come through an atomic (ThreadCheck::did_atomic)
};
// The bit of a device word's init (DevShadow::init) that says its last write was an atomic or a store
// by a thread that had used a device atomic (written_by_atomic: a schedule difference there is a note).
static constexpr uint32_t kInitViaAtomic = 1u << 4;

// An atomic outside shared memory: a release (a fence since the thread's last atomic, then this
// atomic) publishes the block's writes; the atomic observes every release made so far. A
// block-scope fence or atomic releases and observes for the block's own threads only.
static inline void atomic_sync(WorkerCheck& wc, ThreadCheck& k, uint16_t thread, unsigned scope) {
  Checker& ch = g_chk;
  const bool device = scope < kScopeBlock;
  if (k.fenced) {
    ch.releases[wc.run - ch.first_run].push_back(
        Release{++ch.rel_seq, k.fence_epoch, thread, uint16_t(std::min<unsigned>(k.fences, 255)), device && k.fenced == 2,
                k.fenced == 1 ? k.block_fence_pc : 0});
    k.fenced = 0;
  }
  if (device) {
    k.seen = ch.rel_seq;
    wc.blk_seen_pending = std::max(wc.blk_seen_pending, k.seen);
  }
  k.seen_b = ch.rel_seq;
  k.did_atomic = true;
}

// ---- findings (findings.cpp) ----------------------------------------------------------------------

// Names the element at `a` for a report: the shared array, or the kernel parameter that points
// into the buffer (partials[3], not "buffer #2 + 16 bytes"); and as text, "partials[3]".
Where describe(Worker& w, Space sp, uintptr_t a);
std::string where_str(const Where& x);
// Reports are rare: kept out of line so that the per-access path stays small.
__attribute__((noinline, cold)) void record_hazard(const Ctx& c, const Stamp& a, const char* kind,
                                                  HazardClass cls = HazardClass::Plain);
// A PendingRead for the pair (a, c): reported at the reader's block end unless its CAS settles it.
__attribute__((noinline, cold)) void defer_hazard(const Ctx& c, const Stamp& a, const char* kind, uint32_t run, uint16_t thread);
// The reader's atomicCAS on [lo, hi): its pending plain reads of those words were a CAS loop's.
__attribute__((noinline, cold)) void settle_pending(uint32_t run, uint16_t thread, uintptr_t lo, uintptr_t hi);
// Reports the pending reads of the block run `run` (at its end).
void report_pending(uint32_t run);
__attribute__((noinline, cold)) void record_uninit(const Ctx& c);
// An access outside its array or buffer: ends the kernel with the report `what` completes; `facts`
// are the diagnosis record's facts about the element and the array (out_of_bounds adds the access,
// the kernel and the site).
[[noreturn]] __attribute__((noinline, cold)) void out_of_bounds(Ctx& c, bool write, const std::string& what, Facts facts);
// Facts about the element at `x` (array, index, bytes_index) for a diagnosis record.
void element_facts(Facts& f, const Where& x);
// A device memory access at c.addr outside the buffer whose slot holds it, or outside every live
// buffer (in the arena): out of bounds, named after the buffer and the distance, or a use after free.
[[noreturn]] __attribute__((noinline, cold)) void device_out_of_bounds(Ctx& c, bool write);
// The findings of the block run `run` that are still open end at the barrier at file:line (null: the block's end).
void close_findings(uint32_t run, const char* file, int line);

}  // namespace detail
}  // namespace cudasim

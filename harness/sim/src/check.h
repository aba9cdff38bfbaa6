// The memory checker: shadow state for shared and device memory, fed by every load, store and
// atomic that instrumented device code makes (access.cpp), and the hazard, uninitialized-read and
// bounds checks built on it. See docs/architecture.md, "How the simulator sees memory".
#pragma once

#include "private.h"

#include <cstdint>
#include <string>
#include <vector>

#include "events.h"

namespace cudasim {
namespace detail {

struct Worker;
struct Thread;
struct Grid;
struct CBarState;
struct LaunchSite;
struct Diagnosis;
enum class Kind : uint8_t;  // diagnosis.h

// One access as the shadow remembers it, in 20 bytes. `run` identifies the block execution
// (0: no access). Counters that could overflow saturate: a saturated warp clock or fence count can
// only hide a hazard, never invent one.
struct Stamp {
  uint32_t run;
  uint32_t epoch;   // which __syncthreads interval of the block
  uint32_t pc;      // the access's code address, relative to the executable's base (kPcMask), and kPc* bits
  uint16_t wclock;  // the lane's own warp clock when it accessed
  uint16_t thread;  // linear thread index in the block
  uint16_t carr;    // arrivals of the thread at its cuda::barrier (its last used slot) before the access
  uint8_t fences;   // __threadfence() calls the thread had made before the access
  uint8_t flags;    // bit 0: atomic; bits 1-3: cuda::barrier slot (7: none); bits 4-7: bytes of the word
};
// The top bits of Stamp::pc say how the access was made (the code addresses of an executable of
// less than 128 MiB fit below them); reports mask them off.
static constexpr uint32_t kPcMask = 0x07ffffffu;
static constexpr unsigned kPcScopeShift = 30;        // 2 bits: an atomic's scope (kScope* in runtime.h)
static constexpr uint32_t kPcStrong = 1u << 29;      // volatile: strong (relaxed, system scope) in PTX terms
static constexpr uint32_t kPcWide = 1u << 28;        // the access spans more than this word (8 or 16 bytes)
static constexpr uint32_t kPcReadOnly = 1u << 27;    // a load through the read-only path (__ldg)
inline uint32_t stamp_pc(const Stamp& s) { return s.pc & kPcMask; }
inline unsigned stamp_scope(const Stamp& s) { return s.pc >> kPcScopeShift; }
static constexpr uint8_t kNoSlot = 7;
static constexpr uint8_t kAtomic = 1;
inline unsigned stamp_slot(const Stamp& s) { return (s.flags >> 1) & 7; }

// The shadow of one 4-byte word, one cache line: the last write, the last two reads by different
// threads, and which bytes hold a value (shared memory: per block run; device memory: ever) and
// who wrote them.
struct alignas(64) Cell {
  Stamp w, r1, r2;
  uint32_t init;  // shared: (run << 4) | byte mask; device: byte mask | writer kinds << 8 (2 bits a byte)
};
static_assert(sizeof(Cell) == 64, "a shadow cell is one cache line");

// Per-thread checking state, reset when a block starts.
struct ThreadCheck {
  uint16_t vc[32];    // what this lane knows of each lane of its warp (warp vector clock)
  uint16_t carr[4];   // arrivals at each tracked cuda::barrier
  uint16_t cwait[4];  // phases of each tracked cuda::barrier this thread has waited for
  uint8_t cslot;
  uint8_t fenced;       // a fence since the last atomic, the next atomic releases: 0 none, 1 block scope, 2 device
  bool did_atomic;      // a device atomic in this launch: its later plain stores may depend on the order (an index, a lock)
  uint16_t fences;
  uint32_t fence_epoch;
  uint64_t seen;        // releases visible to the thread's last device-scope atomic
  uint64_t acq;         // releases this thread has acquired at device scope (atomic, then fence)
  uint64_t seen_b, acq_b;  // the same at block scope (any atomic, any fence): orders within the block
  uint32_t bars;        // __syncthreads() calls passed
  uint32_t last_pc;     // its last access, for "returned after ..." messages
  uint32_t block_fence_pc;  // its last __threadfence_block(), for a report that a block-scope release published nothing
};

// The checker's state for one worker, owned by the checker (hazards.cpp): the engine's Worker only carries a
// pointer to it (Worker::ck), made at the first checked block the worker runs.
struct WorkerCheck {
  uint32_t run = 0;  // the block run being checked (stamps compare it)
  uintptr_t arr_lo = 0, arr_len = 0;  // the __shared__ array accessed last (reset with every block)
  Cell* sh_shadow = nullptr;   // of the worker's static shared arena and dynamic shared memory,
  Cell* dyn_shadow = nullptr;  // mapped the first time a checked access lands there
  const CBarState* cbar_slots[4] = {};
  int ncbar = 0;
  // Releases (fence, then atomic) this block has seen or acquired; *_pending take effect at the next barrier.
  uint64_t blk_seen = 0, blk_seen_pending = 0, blk_acq = 0, blk_acq_pending = 0;
  std::vector<ThreadCheck> threads;  // by linear thread index
};

// The memory checker as an observer of the engine's events (events.h). Every handler is a cheap
// no-op when the grid is not checked.
struct MemoryChecker : NoEvents {
  static void launch_begin(const LaunchBegin& e);
  static void block_begin(Worker& w, unsigned nthreads);
  static void block_end(Worker& w);
  static inline void access(const AccessEvent& a);  // hazard_check.h
  static void barrier(Worker& w, const char* file, int line);
  // The lanes that met are ordered with each other.
  static void warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g);
  static void fence(Worker& w, Thread& t, uint8_t scope, uint32_t pc);
  // An atomic on memory with no shadow (a __device__ variable): it still releases and acquires.
  static void unshadowed_atomic(Worker& w, Thread& t, uint8_t scope);
  // What the thread does after arriving belongs to the next phase.
  static void cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t phase, bool completes, const char* file, int line);
  static void cbar_waited(Worker& w, Thread& t, const CBarState* b, uint64_t phase);
};
// After the checked run: "" or the report of what was found, with *d its diagnosis.
std::string check_launch_end(Grid& g, Diagnosis* d);
// The code address of the thread's last checked access, 0 when the launch is not checked (for
// the scheduler's report of a thread that returned before a barrier).
uint32_t last_access_pc(const Worker& w, unsigned thread);
// Host-side writes into device memory: cudaMemcpy, cudaMemset.
enum class HostWrite : uint8_t { Copy = 1, Memset = 2 };
void shadow_host_write(const void* dst, size_t bytes, HostWrite how);
void shadow_device_copy(void* dst, const void* src, size_t bytes);
// Bytes a kernel wrote outside the checker's sight (sampling.cpp); via_atomic: kInitViaAtomic.
void shadow_kernel_write(uintptr_t p, size_t bytes, bool via_atomic);
void shadow_alloc(uintptr_t data, size_t bytes, int id, uintptr_t map_lo, uintptr_t map_hi);
void shadow_free(uintptr_t data);
// Whether the last write of every word of [p, p + bytes) in the checked run was an atomic, or a
// plain store by a thread that had already used a device atomic in the launch (an index taken
// with an atomic, a value computed under a lock): its order is legally unspecified.
bool written_by_atomic(uintptr_t p, size_t bytes);
// A code address (as stored in a Stamp) as "file:line" of the learner's source, or "?".
std::string site_of(uint32_t pc);
void symbolize_sites(const std::vector<uint32_t>& pcs);  // one addr2line call for many (then site_of)
const std::string& symbolized_site(uint32_t pc);  // site_of for a pc symbolize_sites has seen ("" if not)
// For the trace (trace.cpp): the array, element index, element size and type (device buffers) at `a`;
// space as in trace.h.
void name_address(Worker& w, int space, uintptr_t a, std::string* array, long long* index, size_t* elem, const char** type);

}  // namespace detail
}  // namespace cudasim

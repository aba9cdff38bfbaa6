// The events the engine raises, and the observers that receive them.
//
// The engine (scheduler.cpp, warps.cpp, cuda_barrier.cpp, launch.cpp, and the access front end in
// access.cpp) runs kernels; it
// knows nothing of what is checked, traced or counted. At each point where something happens that
// an observer may care about, it calls `Observers::<event>(...)`, and each observer keeps its own
// state: the memory checker (hazards.cpp, findings.cpp), the tracer (trace.cpp), the profiler (profile.cpp).
//
// The fan-out is static: `Fanout<...>` expands each event into one direct call per observer, so
// there is no virtual call and no list to walk on the per-access path. An observer implements only
// the events it needs and inherits empty ones from `NoEvents`; the empty calls inline away. Every
// observer's handlers are cheap no-ops unless it is on for the launch (CUDASIM_CHECKS,
// CUDASIM_TRACE, CUDASIM_PROFILE), and the access event is raised only for launches that some
// observer watches (see `observed` in internal.h): the fast path never builds it.
//
// To add an observer: declare it in its header as a struct deriving from NoEvents with static
// handlers, add it to `Observers` below, and include its header here. docs/architecture.md,
// "Events and observers", lists the events with what each carries.
#pragma once

#include "private.h"

#include <cstddef>
#include <cstdint>

namespace cudasim {
namespace detail {

struct Worker;
struct Thread;
struct Grid;
struct WarpGroup;
struct CBarState;
struct DevShadow;  // a device buffer and its shadow (shadow.cpp)

// Where an access lands. The values are the trace's `space` field (trace.cpp).
enum class Space : uint8_t { Shared = 0, Dynamic = 1, Device = 2 };

// One load, store or atomic by one simulated thread, as the instrumentation reported it.
struct AccessEvent {
  Worker& w;
  Thread& t;
  uintptr_t addr;
  size_t size;
  uint32_t pc;  // the access's code address, relative to the executable's base (symbolize with site_of)
  Space space;
  bool write, read, atomic;  // an atomic read-modify-write has all three
  DevShadow* region;         // Space::Device: the buffer it lands in (canaries and slack included)
  uint8_t how;               // kHow* bits: volatile, read-only path, compare-and-swap
  uint8_t scope;             // an atomic's scope (kScope* in cudasim/runtime.h)
};
enum : uint8_t { kHowVolatile = 1, kHowReadOnly = 2, kHowCas = 4 };

// A kernel launch: once per schedule. `ptrs`/`names` are the kernel's pointer arguments and their
// parameter names (for reports that say `out[3]`).
struct LaunchBegin {
  Grid& g;
  const void* const* ptrs;
  const char* const* names;
  int n;
  // Per pointer: declared `const T* __restrict__`, which nvcc may read through the read-only path.
  const unsigned char* read_only;
};

struct NoEvents {
  static void launch_begin(const LaunchBegin&) {}
  static void launch_end(Grid&) {}
  static void block_begin(Worker&, unsigned /*nthreads*/) {}
  static void block_end(Worker&) {}
  static void access(const AccessEvent&) {}
  // A __syncthreads() released every thread of the block, at file:line.
  static void barrier(Worker&, const char* /*file*/, int /*line*/) {}
  // The lanes of a warp met in a *_sync call (shuffle, vote, __syncwarp, __activemask).
  static void warp_collective(Worker&, unsigned /*warp_index*/, const WarpGroup&) {}
  // A fence of the given scope (kScope* in cudasim/runtime.h).
  static void fence(Worker&, Thread&, uint8_t /*scope*/, uint32_t /*pc: the fence's code address, 0 unknown*/) {}
  static void cbar_arrive(Worker&, Thread&, const CBarState*, uint64_t /*phase*/, bool /*completes*/, const char* /*file*/,
                          int /*line*/) {}
  static void cbar_waited(Worker&, Thread&, const CBarState*, uint64_t /*phase*/) {}
  static void thread_exit(Worker&, Thread&) {}
  // Raised by the memory checker for the observers after it: a hazard between two accesses, and
  // a read of bytes nothing wrote (inside the access's own hook, before its store).
  static void hazard(Worker&, const char* /*kind*/, unsigned /*thread_a*/, uint32_t /*pc_a*/, unsigned /*thread_b*/,
                     uint32_t /*pc_b*/, Space, uintptr_t /*addr*/, bool /*cross_block*/) {}
  static void uninit(Worker&, unsigned /*thread*/, uint32_t /*pc*/, Space, uintptr_t /*addr*/) {}
};

template <class... O>
struct Fanout {
  static void launch_begin(const LaunchBegin& e) { (O::launch_begin(e), ...); }
  static void launch_end(Grid& g) { (O::launch_end(g), ...); }
  static void block_begin(Worker& w, unsigned n) { (O::block_begin(w, n), ...); }
  static void block_end(Worker& w) { (O::block_end(w), ...); }
  static inline __attribute__((always_inline)) void access(const AccessEvent& a) { (O::access(a), ...); }
  static void barrier(Worker& w, const char* file, int line) { (O::barrier(w, file, line), ...); }
  static void warp_collective(Worker& w, unsigned warp, const WarpGroup& g) { (O::warp_collective(w, warp, g), ...); }
  static void fence(Worker& w, Thread& t, uint8_t scope = 0 /* device */, uint32_t pc = 0) { (O::fence(w, t, scope, pc), ...); }
  static void cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t phase, bool completes, const char* file, int line) {
    (O::cbar_arrive(w, t, b, phase, completes, file, line), ...);
  }
  static void cbar_waited(Worker& w, Thread& t, const CBarState* b, uint64_t phase) { (O::cbar_waited(w, t, b, phase), ...); }
  static void thread_exit(Worker& w, Thread& t) { (O::thread_exit(w, t), ...); }
  static void hazard(Worker& w, const char* kind, unsigned ta, uint32_t pa, unsigned tb, uint32_t pb, Space sp, uintptr_t addr,
                     bool cross) {
    (O::hazard(w, kind, ta, pa, tb, pb, sp, addr, cross), ...);
  }
  static void uninit(Worker& w, unsigned thread, uint32_t pc, Space sp, uintptr_t addr) { (O::uninit(w, thread, pc, sp, addr), ...); }
};

struct MemoryChecker;  // check.h
struct Tracer;         // trace.h
struct Profiler;       // profile.h

}  // namespace detail
}  // namespace cudasim

#include "check.h"
#include "profile.h"
#include "trace.h"

namespace cudasim {
namespace detail {
// The order matters where one observer reads what another records: the tracer writes a hazard the
// checker found inside the same access, so the checker comes first.
using Observers = Fanout<MemoryChecker, Tracer, Profiler>;
}  // namespace detail
}  // namespace cudasim

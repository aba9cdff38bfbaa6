// The profiler: counts what a GPU's memory pipeline would do with the accesses of each warp, the
// way Nsight Compute counts it (shared-memory wavefronts and bank conflicts, global requests and
// 32-byte sectors, active lanes, atomics, barriers), per launch and per code address, for
// `scripts/puzzle.py profile`. docs/architecture.md, "The profiler", defines a warp-level
// instruction and the counting rules.
//
// CUDASIM_PROFILE=FILE turns it on: the first schedule of every launch is profiled (on one worker,
// like the checked run) and FILE receives one JSON object a line per launch. Off, its access
// handler is one test of a global flag, and it is reached only for launches that an observer
// watches.
#pragma once

#include "private.h"

#include <cstddef>
#include <cstdint>

#include "events.h"

namespace cudasim {
namespace detail {

extern bool g_profile_on;  // CUDASIM_PROFILE is set

struct Profiler : NoEvents {
  static void launch_begin(const LaunchBegin& e);
  static void launch_end(Grid& g);
  static void block_begin(Worker& w, unsigned nthreads);
  static void block_end(Worker& w);
  static inline __attribute__((always_inline)) void access(const AccessEvent& a) {
    if (__builtin_expect(g_profile_on, 0)) record(a);
  }
  static void barrier(Worker& w, const char* file, int line);
  static void warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g);

 private:
  static void record(const AccessEvent& a);
};

// Whether the profiler watches launches with this schedule index (the first schedule only).
inline bool profiles(int schedule_index) { return g_profile_on && schedule_index == 0; }

// The counting rules, exposed for the unit tests (tests/sim/test_profile.cpp): one warp-level
// shared-memory instruction whose active lanes (bit i of `mask`: lane i) access `size[i]` bytes at
// shared-memory byte offset `addr[i]`.
struct SharedCost {
  uint32_t wavefronts;  // passes through the 32 banks
  uint32_t ideal;       // the fewest passes an access of that width needs (1, or 2 and 4 for 8 and 16 bytes)
  // With conflicts: the distance in 4-byte words between neighbouring active lanes that most of
  // them share (2 for `s[2 * tid]`), for the learner's sentence; 0 without conflicts or a common one.
  uint32_t stride;
};
SharedCost shared_cost(uint32_t mask, const uintptr_t* addr, const uint8_t* size);
// One warp-level global-memory instruction: the 32-byte sectors it touches, and the fewest that its
// distinct bytes could fit in.
struct GlobalCost {
  uint32_t sectors;
  uint32_t ideal;
  uint32_t bytes;       // distinct bytes accessed
  uint32_t same_addr;   // the most lanes that access one address (atomics serialise on it)
};
GlobalCost global_cost(uint32_t mask, const uintptr_t* addr, const uint8_t* size);

}  // namespace detail
}  // namespace cudasim

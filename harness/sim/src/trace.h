// The trace: a record of what one block did in every launch, barrier interval by barrier
// interval, for `scripts/puzzle.py trace` (scripts/puzzlelib/trace.py draws it).
//
// CUDASIM_TRACE=FILE turns it on; CUDASIM_TRACE_BLOCK=B picks the block (linear index, default 0).
// Only the checked run of each launch (the first schedule) is traced: the memory checker's hooks
// feed it, so it sees exactly the accesses, hazards and uninitialized reads that the checker sees.
// FILE receives JSON lines, one event each (the format is described in trace.cpp).
//
// Off, it costs one test of a global flag per checked access.
#pragma once

#include "private.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "events.h"

namespace cudasim {
namespace detail {

struct Worker;
struct Thread;
struct Grid;
struct WarpGroup;
struct CBarState;

extern bool g_trace_on;  // CUDASIM_TRACE is set

// The tracer as an observer of the engine's events (events.h), and of the checker's findings.
struct Tracer : NoEvents {
  static void launch_begin(const LaunchBegin& e);
  static void launch_end(Grid& g);
  static void block_begin(Worker& w, unsigned nthreads);
  static void block_end(Worker& w);
  static inline __attribute__((always_inline)) void access(const AccessEvent& a) {
    if (__builtin_expect(g_trace_on, 0)) record(a);
  }
  static void barrier(Worker& w, const char* file, int line);
  static void warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g);
  static void cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t phase, bool completes, const char* file, int line);
  static void hazard(Worker& w, const char* kind, unsigned thread_a, uint32_t pc_a, unsigned thread_b, uint32_t pc_b, Space space,
                     uintptr_t a, bool cross_block);
  static void uninit(Worker& w, unsigned thread, uint32_t pc, Space space, uintptr_t a);

 private:
  static void record(const AccessEvent& a);
};
void trace_error(const Grid& g, const char* kind, const std::string& message);

}  // namespace detail
}  // namespace cudasim

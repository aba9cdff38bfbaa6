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

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudasim {
namespace detail {

struct Worker;
struct Thread;
struct Grid;
struct WarpGroup;
struct CBarState;

extern bool g_trace_on;  // CUDASIM_TRACE is set

void trace_launch_begin(const Grid& g);
void trace_launch_end(const Grid& g);
void trace_block_begin(Worker& w);
void trace_block_end(Worker& w);
void trace_barrier(Worker& w, const char* file, int line);
// space: 0 static shared, 1 dynamic shared, 2 device memory.
void trace_access(Worker& w, const Thread& t, int space, uintptr_t a, size_t size, bool write, bool read, bool atomic,
                  uint32_t pc);
void trace_hazard(Worker& w, const char* kind, unsigned thread_a, uint32_t pc_a, unsigned thread_b, uint32_t pc_b, int space,
                  uintptr_t a, bool cross_block);
void trace_uninit(Worker& w, unsigned thread, uint32_t pc, int space, uintptr_t a);
void trace_warp(Worker& w, unsigned warp_index, const WarpGroup& g);
void trace_cbar(Worker& w, const Thread& t, const CBarState* b, uint64_t phase, bool completes, const char* file, int line);
void trace_error(const Grid& g, const char* kind, const std::string& message);

}  // namespace detail
}  // namespace cudasim

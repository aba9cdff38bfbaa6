// Watch mode (watch.cpp): the provenance of device memory for the harness's rerun of a wrong answer.
#pragma once

#include "private.h"

#include <cstdint>

#include "events.h"

namespace cudasim {
namespace detail {

struct Worker;
struct Thread;

extern bool g_watch_on;  // cudasim::watch_begin() .. watch_end()
// One checked access of one 4-byte word: a read remembers the word's writer and value for the
// thread's next write; a write becomes a node with those reads. `dinit`: the device word's
// DevShadow::init (null for shared memory).
__attribute__((noinline, cold)) void watch_access(Worker& w, Thread& t, Space sp, uintptr_t word, bool write, bool read,
                                                  uint32_t run, uint32_t pc, const uint16_t* dinit);

}  // namespace detail
}  // namespace cudasim

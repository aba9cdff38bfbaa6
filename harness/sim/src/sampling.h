// Checks that scale (sampling.cpp): a big launch in a program run with `puzzle.py sim` is checked
// on a sample of its blocks. Internal.
#pragma once

#include "private.h"

#include <cstdint>

namespace cudasim {
namespace detail {

struct Grid;
struct Worker;
struct LaunchSite;

// Whether the launch of `blocks` blocks of `threads` threads is checked on a sample of its blocks
// (Options::sample, CUDASIM_SAMPLE); never while the profiler or the trace is on.
bool launch_sampled(uint64_t blocks, uint64_t threads);
// Fills g.sample for the checked run of a sampled launch: the first and the last block and a set
// drawn from the seed and the launch's number; prints, once per launch site, what was sampled.
// `before`: the memory the launch started from (what unchecked blocks wrote is what differs).
struct Snapshot;
void choose_sample(Grid& g, uint64_t launch_no, const Snapshot* before);
// When a block begins: a block of a sampled launch outside the sample runs unchecked (its device
// writes still mark bytes as initialized: Worker::mark_init).
void sample_block(Worker& w);
// After the checked run of a sampled launch: marks what the unchecked blocks wrote (the bytes that
// differ from `before`) as written by a kernel.
void unchecked_writes_done(const Snapshot& before);
// A sampled run found something: says that the launch is checked again on every block.
void note_full_recheck(const LaunchSite& site);

}  // namespace detail
}  // namespace cudasim

// Included first by every header of harness/sim/src: they are the simulator's own, not an API. A
// learner's file (CUDASIM_LEARNER_FILE, set by the puzzle build) sees CUDA's headers only.
#pragma once

#if defined(CUDASIM_LEARNER_FILE)
#error "harness/sim/src holds the simulator's internals: a puzzle file uses only CUDA's own API, so that it also builds with nvcc"
#endif

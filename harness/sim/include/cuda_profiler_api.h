// The CPU simulator's stand-in for CUDA's <cuda_profiler_api.h>: cudaProfilerStart/Stop do nothing.
#pragma once
#include "cudasim/runtime.h"

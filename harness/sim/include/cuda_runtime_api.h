// The CPU simulator's stand-in for CUDA's <cuda_runtime_api.h>: everything is in cudasim/runtime.h.
#pragma once
#include "cudasim/runtime.h"

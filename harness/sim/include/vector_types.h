// The CPU simulator's stand-in for CUDA's <vector_types.h>: everything is in cudasim/runtime.h.
#pragma once
#include "cudasim/runtime.h"

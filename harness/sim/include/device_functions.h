// The CPU simulator's stand-in for CUDA's <device_functions.h>: everything is in cudasim/runtime.h.
#pragma once
#include "cudasim/runtime.h"

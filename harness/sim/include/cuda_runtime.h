// The CPU simulator's stand-in for CUDA's runtime header.
#pragma once
#include "cudasim/runtime.h"

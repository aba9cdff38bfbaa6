// <cooperative_groups/scan.h>: CUDA declares cg::inclusive_scan and cg::exclusive_scan here; the
// simulator keeps them with cg::reduce (reduce.h), built from the same group shuffles.
#pragma once

#include "reduce.h"

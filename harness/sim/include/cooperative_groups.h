#pragma once
#error "cudasim: cooperative groups are not supported by the CPU simulator. Use __syncthreads(), __syncwarp() and the *_sync warp intrinsics (see harness/sim/README.md), or build for a GPU."

// The simulator runs every launch under three thread schedules; a kernel's printf must still
// print once. Expected: exit 0, the line exactly once.
#include <cstdio>

__global__ void hello() {
  if (blockIdx.x == 2 && threadIdx.x == 7) printf("hello from block %d thread %d of %dx%d\n", blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  if (blockIdx.x == 0 && threadIdx.x == 0) std::printf("std::printf from block %d\n", blockIdx.x);
}

int main() {
  hello<<<3, 8>>>();
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::fflush(stdout);
  std::printf("host done\n");
  return 0;
}

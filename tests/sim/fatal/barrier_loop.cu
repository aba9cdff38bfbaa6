// A loop around __syncthreads() whose stride never grows: the block passes the barrier without
// end. CUDASIM_MAX_BARRIERS sets how many passes of one barrier end the run. Expected: exit 4.
#include <cstdio>

__global__ void never_ends(int* out, int n) {
  for (int stride = 1; stride < n; stride *= 1) {  // the bug: *= 2 was meant
    __syncthreads();
  }
  out[threadIdx.x] = 0;
}

int main() {
  int* out;
  cudaMalloc(&out, 32 * sizeof(int));
  never_ends<<<1, 32>>>(out, 32);
  std::printf("unreachable: the loop ended\n");
  return 0;
}

// extern __shared__ needs its size as the third <<<>>> argument; without it the kernel gets
// 0 bytes. Expected: exit 4, "out-of-bounds access to shared memory", "asked for 0 bytes".
#include <cstdio>

__global__ void scan_block(const int* in, int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[0];
}

int main() {
  int* in;
  int* out;
  cudaMalloc(&in, 256 * sizeof(int));
  cudaMalloc(&out, 256 * sizeof(int));
  cudaMemset(in, 0, 256 * sizeof(int));
  scan_block<<<1, 256>>>(in, out);  // the bug: should be <<<1, 256, 256 * sizeof(int)>>>
  std::printf("unreachable: no fault\n");
  return 0;
}

// Thread 31 reads tile[32] of a 32-float __shared__ array. Expected: exit 4, the array named with
// its size and the byte that was read.
#include <cstdio>

__global__ void shift_left(const float* in, float* out) {
  __shared__ float tile[32];
  tile[threadIdx.x] = in[blockIdx.x * 32 + threadIdx.x];
  __syncthreads();
  float right = blockIdx.x == 1 ? tile[threadIdx.x + 1] : 0.f;  // the bug: no check for the last thread
  out[blockIdx.x * 32 + threadIdx.x] = right;
}

int main() {
  float* in;
  float* out;
  cudaMalloc(&in, 64 * sizeof(float));
  cudaMalloc(&out, 64 * sizeof(float));
  cudaMemset(in, 0, 64 * sizeof(float));
  shift_left<<<2, 32>>>(in, out);
  std::printf("unreachable: no fault\n");
  return 0;
}

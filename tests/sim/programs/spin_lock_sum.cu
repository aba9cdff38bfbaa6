// A float sum kept under a spin lock, as teaching code for atomics does: between blocks (one
// thread of each block adds) and between the threads of one block (one lane of each warp adds).
// The lock is taken with atomicCAS and released with atomicExch; the fences after taking it and
// before releasing it make the guarded sum an ordered read-modify-write. The order in which the
// holders come is unspecified, so the float total may round differently: the check allows that.
#include <cmath>
#include <cstdio>

__device__ void lock(int* mutex) {
  while (atomicCAS(mutex, 0, 1) != 0) {
  }
  __threadfence();
}
__device__ void unlock(int* mutex) {
  __threadfence();
  atomicExch(mutex, 0);
}

__global__ void sum_between_blocks(int* mutex, float* sum) {
  if (threadIdx.x == 0) {
    lock(mutex);
    *sum += 0.1f * float(blockIdx.x + 1);
    unlock(mutex);
  }
}

__global__ void sum_within_block(int* mutex, float* sum) {
  if (threadIdx.x % 32 == 0) {
    lock(mutex);
    *sum += 0.1f * float(threadIdx.x / 32 + 1);
    unlock(mutex);
  }
}

int main() {
  int* d_mutex;
  float* d_sum;
  cudaMalloc(&d_mutex, sizeof(int));
  cudaMalloc(&d_sum, sizeof(float));
  cudaMemset(d_mutex, 0, sizeof(int));
  cudaMemset(d_sum, 0, sizeof(float));
  sum_between_blocks<<<16, 64>>>(d_mutex, d_sum);
  float between = 0;
  cudaMemcpy(&between, d_sum, sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemset(d_sum, 0, sizeof(float));
  sum_within_block<<<1, 512>>>(d_mutex, d_sum);
  float within = 0;
  cudaMemcpy(&within, d_sum, sizeof(float), cudaMemcpyDeviceToHost);
  const bool ok = std::fabs(between - 13.6f) < 1e-3f && std::fabs(within - 13.6f) < 1e-3f;
  printf("between blocks %.4f, within a block %.4f\n%s\n", between, within, ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_mutex);
  cudaFree(d_sum);
  return ok ? 0 : 1;
}

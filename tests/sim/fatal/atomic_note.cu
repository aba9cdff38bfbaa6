// Float atomicAdd in an order the thread schedule decides: the sum differs between the 'forward'
// and 'reverse' runs by rounding. Only atomics wrote it, so that is not a race: exit 0, with a
// note on stderr, given once per process.
#include <cstdio>

__global__ void float_sum(float* sum) { atomicAdd(sum, threadIdx.x == 0 ? 1e8f : 1.0f); }

int main() {
  float* sum;
  cudaMalloc(&sum, sizeof(float));
  for (int i = 0; i < 2; ++i) {
    cudaMemset(sum, 0, sizeof(float));
    float_sum<<<1, 64>>>(sum);
  }
  float h = 0;
  cudaMemcpy(&h, sum, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("sum done: %s\n", h >= 1e8f && h <= 1e8f + 64 ? "in range" : "out of range");
  return 0;
}

// Each block adds its tile's sum to a global total, but reads the total with a plain (volatile)
// load, reduces its tile, and then stores old + sum with atomicExch: the atomic makes the store
// indivisible, not the read-modify-write. A block that reads the total while another block is
// between its read and its store loses that block's contribution. One block after another
// never shows it; blocks that run side by side do.
#include <cstdio>
#include <cstdlib>

constexpr int kThreads = 64;

__global__ void add_tiles(const int* in, volatile int* total) {
  __shared__ int sums[kThreads];
  __shared__ int old_sh;
  if (threadIdx.x == 0) old_sh = *total;  // the stale read
  sums[threadIdx.x] = in[blockIdx.x * kThreads + threadIdx.x];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicExch((int*)total, old_sh + sums[0]);
}

int main() {
  const int blocks = 16, n = blocks * kThreads;
  int* h = (int*)malloc(n * sizeof(int));
  long expected = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = i % 3 + 1;
    expected += h[i];
  }
  int *in, *total;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&total, sizeof(int));
  cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(total, 0, sizeof(int));
  add_tiles<<<blocks, kThreads>>>(in, total);
  int got = 0;
  cudaMemcpy(&got, total, sizeof(int), cudaMemcpyDeviceToHost);
  printf("total %d, expected %ld\n", got, expected);
  cudaFree(in);
  cudaFree(total);
  free(h);
  bool ok = got == expected;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

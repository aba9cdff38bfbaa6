// A chained scan of per-block sums in the style of a decoupled look-back: each block takes a
// ticket (so it only waits for blocks that started before it), computes its tile's sum, then
// waits for the inclusive prefix of the tile before it. The bug: it polls that flag a bounded
// number of times and then assumes the predecessor contributed 0. That is right only while
// every predecessor has finished before its successor looks, which is what one block after
// another shows and what blocks that run side by side (a GPU) do not.
#include <cstdio>
#include <cstdlib>

constexpr int kThreads = 64;
constexpr int kPolls = 8;

__global__ void chained_prefix(const int* in, unsigned* ticket, int* ready, volatile int* prefix, int* out) {
  __shared__ int tile_sh;
  __shared__ int sums[kThreads];
  if (threadIdx.x == 0) tile_sh = (int)atomicAdd(ticket, 1u);
  __syncthreads();
  const int tile = tile_sh;
  sums[threadIdx.x] = in[tile * kThreads + threadIdx.x];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    int before = 0;
    if (tile > 0) {
      int polls = 0;
      while (atomicAdd(&ready[tile - 1], 0) == 0 && polls < kPolls) ++polls;  // gives up after kPolls reads
      if (atomicAdd(&ready[tile - 1], 0) != 0) {
        __threadfence();
        before = prefix[tile - 1];
      }
    }
    prefix[tile] = before + sums[0];
    __threadfence();
    atomicExch(&ready[tile], 1);
    out[tile] = before + sums[0];
  }
}

int main() {
  const int blocks = 16, n = blocks * kThreads;
  int* h = (int*)malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % 5 + 1;
  int *in, *ready, *prefix, *out;
  unsigned* ticket;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&ticket, sizeof(unsigned));
  cudaMalloc(&ready, blocks * sizeof(int));
  cudaMalloc(&prefix, blocks * sizeof(int));
  cudaMalloc(&out, blocks * sizeof(int));
  cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(ticket, 0, sizeof(unsigned));
  cudaMemset(ready, 0, blocks * sizeof(int));
  cudaMemset(prefix, 0, blocks * sizeof(int));
  chained_prefix<<<blocks, kThreads>>>(in, ticket, ready, prefix, out);
  int got[blocks];
  cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
  bool ok = true;
  int run = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < kThreads; ++i) run += h[b * kThreads + i];
    if (got[b] != run) ok = false;
  }
  printf("last prefix %d, expected %d\n", got[blocks - 1], run);
  cudaFree(in);
  cudaFree(ticket);
  cudaFree(ready);
  cudaFree(prefix);
  cudaFree(out);
  free(h);
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

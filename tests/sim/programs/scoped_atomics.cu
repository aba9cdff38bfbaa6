// atomicAdd_block counts per block: atomic among the threads of one block, which is all this
// kernel needs when each block has its own counter. Run with `--one-counter` to make every block
// count into the same counter: atomicAdd_block is then not atomic between the blocks (a race; it
// needs atomicAdd).
#include <cstdio>
#include <cstring>

__global__ void count(int* counters, bool one_counter) {
  int* c = one_counter ? &counters[0] : &counters[blockIdx.x];
  atomicAdd_block(c, 1);  // @block-add
  __syncthreads();
}

int main(int argc, char** argv) {
  const bool one = argc > 1 && std::strcmp(argv[1], "--one-counter") == 0;
  const int blocks = 4, threads = 128;
  int* d;
  cudaMalloc(&d, blocks * sizeof(int));
  cudaMemset(d, 0, blocks * sizeof(int));
  count<<<blocks, threads>>>(d, one);
  int h[blocks];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int b = 0; b < blocks; ++b) ok = ok && h[b] == (one ? (b == 0 ? blocks * threads : 0) : threads);
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d);
  return ok ? 0 : 1;
}

// Blocks that pass a value along a chain (tests/python/test_sampling.py): each block takes a ticket
// b (so it waits only for a block that started before it), waits for the flag of ticket b - 1,
// reads the value published there, adds one and publishes its own. With a sample of blocks
// checked, a checked block reads what an unchecked block wrote in the same launch: that memory
// holds a value (no uninitialized-read warning).
#include <cstdio>

__global__ void chain(int* value, int* flag, int* ticket) {
  if (threadIdx.x != 0) return;
  const int b = atomicAdd(ticket, 1);
  int v = 0;
  if (b > 0) {
    while (atomicAdd(&flag[b - 1], 0) == 0) {
    }
    __threadfence();
    v = value[b - 1] + 1;
  }
  value[b] = v;
  __threadfence();
  atomicExch(&flag[b], 1);
}

int main() {
  const int blocks = 64;
  int *value, *flag, *ticket;
  cudaMalloc(&value, blocks * sizeof(int));
  cudaMalloc(&flag, blocks * sizeof(int));
  cudaMalloc(&ticket, sizeof(int));
  cudaMemset(flag, 0, blocks * sizeof(int));
  cudaMemset(ticket, 0, sizeof(int));
  chain<<<blocks, 32>>>(value, flag, ticket);
  int last = -1;
  cudaMemcpy(&last, value + blocks - 1, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf(last == blocks - 1 ? "Test PASSED\n" : "Test FAILED: %d\n", last);
  return last == blocks - 1 ? 0 : 1;
}

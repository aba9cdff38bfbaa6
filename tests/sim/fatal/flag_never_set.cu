// Block 1 waits for a flag that block 0 was to set and never does (as a decoupled look-back waits
// for a tile that never publishes). The warp re-reads the flag and votes each turn, so the warp
// makes progress and only the block's running time stops it. Expected (with
// CUDASIM_BLOCK_SECONDS=1): exit 4, "runaway block" naming block 1 as the last block running.
#include <cstdio>

__global__ void wait_for_block_0(volatile int* flag, int* out) {
  if (blockIdx.x == 0) {
    out[0] = 1;  // forgets `*flag = 1` (after a __threadfence())
    return;
  }
  int seen = 0;
  while (!__any_sync(0xffffffffu, seen != 0)) seen = *flag;
  out[1] = seen;
}

int main() {
  int* flag;
  int* out;
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&out, 2 * sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  wait_for_block_0<<<2, 32>>>(flag, out);
  cudaDeviceSynchronize();
  std::printf("unreachable: the waiting block was not stopped\n");
  return 0;
}

// Block 0 waits for a flag that only the last block of the grid sets. On a GPU, blocks start in
// no guaranteed order and a started block keeps its slot until it returns: when block 0 and the
// blocks after it fill every slot before the last block starts, block 0 waits for ever. The
// simulator must call it an endless wait with any number of worker threads.
#include <cstdio>
#include <cstdlib>

__global__ void wait_for_last(volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (*flag == 0) {
    }
    out[0] = *flag;
  } else if (blockIdx.x == gridDim.x - 1) {
    *flag = 7;
  }
}

int main() {
  const int blocks = 8;
  int *flag, *out;
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&out, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  cudaMemset(out, 0, sizeof(int));
  wait_for_last<<<blocks, 32>>>(flag, out);
  cudaError_t err = cudaDeviceSynchronize();
  int got = 0;
  cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost);
  printf("out %d (%s)\n", got, cudaGetErrorString(err));
  cudaFree(flag);
  cudaFree(out);
  bool ok = err == cudaSuccess && got == 7;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

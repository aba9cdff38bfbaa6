// Thread 5 never leaves its loop. Expected (with CUDASIM_STALL_SECONDS=1): exit 4 within a few
// seconds, "runaway thread" naming the kernel, block and thread, and line 7, where it loops.
#include <cstdio>

__global__ void spin(int* out) {
  if (threadIdx.x == 5)
    while (true) {
    }
  out[threadIdx.x] = 1;
}

int main() {
  int* out;
  cudaMalloc(&out, 32 * sizeof(int));
  spin<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  std::printf("unreachable: the runaway thread was not stopped\n");
  return 0;
}

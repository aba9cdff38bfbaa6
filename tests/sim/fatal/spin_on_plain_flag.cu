// Thread 0 waits for thread 32 on a plain (not volatile) __shared__ flag, with no barrier between
// the two. In the forward order thread 0 runs first: it reads the flag once (a plain value may be
// kept in a register, as nvcc does too) and spins for ever, as it can on a GPU. C++, unlike CUDA,
// lets the compiler assume that a loop without side effects ends (the forward-progress rule): g++
// deleted this loop, and the program used to finish as if thread 32 had already written the flag.
// The simulator compiles learner files with -fno-finite-loops so that the loop stays. Expected (with
// CUDASIM_STALL_SECONDS=1): exit 4, "runaway thread" naming block 0, thread 0 and line 15.
#include <cstdio>

__global__ void handoff(int* out) {
  __shared__ int ready;
  if (threadIdx.x == 0) ready = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    while (ready == 0) {
    }
    out[0] = 1;
  } else if (threadIdx.x == 32) {
    ready = 1;
  }
}

int main() {
  int* out;
  cudaMalloc(&out, sizeof(int));
  handoff<<<1, 64>>>(out);
  cudaDeviceSynchronize();
  std::printf("unreachable: the wait ended\n");
  return 0;
}

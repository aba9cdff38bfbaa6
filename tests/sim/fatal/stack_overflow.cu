// Unbounded recursion in a kernel runs into the guard page below the thread's fiber stack.
// Expected: exit 4, "stack overflow", and the hint about CUDASIM_STACK_KB.
#include <cstdio>

__device__ int recurse(int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  frame[511] = (char)depth;
  if (depth == 1 << 30) return 0;  // never reached: the stack overflows long before
  return recurse(depth + 1) + frame[0] + frame[511];  // not a tail call: every frame stays
}

__global__ void go(int* out) { out[threadIdx.x] = recurse(threadIdx.x); }

int main() {
  int* out;
  cudaMalloc(&out, 4 * sizeof(int));
  go<<<1, 4>>>(out);
  std::printf("unreachable: the recursion returned\n");
  return 0;
}

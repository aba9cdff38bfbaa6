// In the default error mode (ErrorMode::Exit) a race ends the process with status 3.
#include <cstdio>

__global__ void shift_left(int* a, int n) {
  int i = threadIdx.x;
  if (i + 1 < n) a[i] = a[i + 1];  // the bug: reads a neighbour's element that it may have overwritten
}

int main() {
  int h[64];
  for (int i = 0; i < 64; ++i) h[i] = i;
  int* a;
  cudaMalloc(&a, sizeof h);
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  shift_left<<<1, 64>>>(a, 64);
  std::printf("unreachable: no race found\n");
  return 0;
}

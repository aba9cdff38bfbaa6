// In the default error mode (ErrorMode::Exit) a kernel error other than a race exits with status 4.
#include <cstdio>

__global__ void split(int* a) {
  if (threadIdx.x % 2 == 0) {
    a[threadIdx.x] = 1;
    __syncthreads();
  } else {
    __syncthreads();
    a[threadIdx.x] = 2;
  }
}

int main() {
  int* a;
  cudaMalloc(&a, 64 * sizeof(int));
  split<<<1, 64>>>(a);
  std::printf("unreachable: no divergence found\n");
  return 0;
}

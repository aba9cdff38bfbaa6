// Kernels whose loads and stores are made inside templated __device__ helpers of a header
// (store.cuh): a report must name the header's lines, not the simulator's translated copies.
//
//   main race   neighbours shift an array in place: thread i reads a[i + 1] while thread i + 1 writes it
//   main oob    one thread per element, two blocks of 64 for 100 elements, and no `i < n` guard
//   main        both done right; prints Test PASSED
#include <cstdio>
#include <cstring>

#include "store.cuh"

__global__ void shift_left(int* a, int n) {
  const int i = threadIdx.x;
  if (i + 1 < n) store_at(a, i, load_at(a, i + 1));
}

__global__ void shift_left_safely(const int* in, int* out, int n) {
  const int i = threadIdx.x;
  if (i + 1 < n) store_at(out, i, load_at(in, i + 1));
}

__global__ void fill_index(int* out, int n, bool guarded) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (!guarded || i < n) store_at(out, i, i);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const int n = 100;
  int *d_a, *d_b;
  cudaMalloc(&d_a, n * sizeof(int));
  cudaMalloc(&d_b, n * sizeof(int));
  cudaMemset(d_a, 0, n * sizeof(int));
  cudaMemset(d_b, 0, n * sizeof(int));
  if (std::strcmp(mode, "race") == 0) shift_left<<<1, 64>>>(d_a, 64);
  fill_index<<<2, 64>>>(d_a, n, std::strcmp(mode, "oob") != 0);
  shift_left_safely<<<1, 64>>>(d_a, d_b, 64);
  int h[n];
  cudaMemcpy(h, d_b, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 63; ++i)
    if (h[i] != i + 1) {
      std::printf("b[%d] = %d, expected %d\nTest FAILED\n", i, h[i], i + 1);
      return 1;
    }
  std::printf("Test PASSED\n");
  return 0;
}

// The kernels of the multi-file program, in a header as many courses and samples do: the
// simulator's `sim` command translates it because main.cu includes it.
#pragma once
#include "histogram.h"

__global__ void histogram_kernel(const unsigned char* data, int n, unsigned int* bins) {
  extern unsigned int __shared__ local[];  // the qualifier after the type, as some code writes it
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i] % NUM_BINS], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

inline void histogram(const unsigned char* d_data, int n, unsigned int* d_bins) {
  void (*kernel)(const unsigned char*, int, unsigned int*) = histogram_kernel;
  kernel<<<4, 128, NUM_BINS * sizeof(unsigned int)>>>(d_data, n, d_bins);  // through a pointer
}

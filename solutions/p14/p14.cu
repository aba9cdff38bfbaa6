#include <cuda_runtime.h>
__global__ void prefix_sum_simple(const int* a, int* out, int size) {
  extern __shared__ int shared[];
  const int local_i = threadIdx.x;
  if (local_i < size) shared[local_i] = a[local_i];
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    int v = 0;
    if (local_i >= offset && local_i < size) v = shared[local_i - offset];
    __syncthreads();
    if (local_i >= offset && local_i < size) shared[local_i] += v;
    __syncthreads();
  }
  if (local_i < size) out[local_i] = shared[local_i];
}
void p14_simple(const int* in, int* out, int n, int tpb) {
  prefix_sum_simple<<<1, tpb, tpb * sizeof(int)>>>(in, out, n);
}

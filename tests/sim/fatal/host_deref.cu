// Host code reads a device pointer directly. Device memory is inaccessible outside kernels and
// the runtime (as on a GPU), so this faults. Expected: exit 4, "host code dereferenced device memory".
#include <cstdio>

__global__ void fill(int* a) { a[threadIdx.x] = 7; }

int main() {
  int* d;
  cudaMalloc(&d, 16 * sizeof(int));
  fill<<<1, 16>>>(d);
  cudaDeviceSynchronize();
  int first = d[0];  // the bug: should be cudaMemcpy(..., cudaMemcpyDeviceToHost)
  std::printf("unreachable: host read %d from device memory\n", first);
  return 0;
}

// __noinline__ as CUDA code writes it on a __device__ function, beside a host function that spells
// GCC's attribute __attribute__((__noinline__)) as libstdc++ does: the simulator's translator turns
// the first into the attribute and leaves the second alone.
#include <cstdio>
#include <vector>
__device__ __noinline__ int twice(int x) { return 2 * x; }
__attribute__((__noinline__)) static int host_twice(int x) { return 2 * x; }
__global__ void k(int* out) { out[threadIdx.x] = twice(threadIdx.x); }
int main() {
  int* d;
  cudaMalloc(&d, 32 * sizeof(int));
  k<<<1, 32>>>(d);
  std::vector<int> h(32);
  cudaMemcpy(h.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < 32; ++i) ok = ok && h[i] == host_twice(i);
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? 0 : 1;
}

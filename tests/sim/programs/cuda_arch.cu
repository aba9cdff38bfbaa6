// Code that picks its path with __CUDA_ARCH__, as portable CUDA does: a warp sum that uses
// __reduce_add_sync where the device has it (compute capability 8.0 and later) and a shuffle tree
// otherwise, a device function that reports the architecture it was compiled for, and host code
// that must see no __CUDA_ARCH__ at all (nvcc's host pass). The simulated device is sm_90, as
// cudaGetDeviceProperties says, so both kernels must take their sm_80+ branch.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

__device__ int compiled_arch() {
#ifdef __CUDA_ARCH__
  return __CUDA_ARCH__;
#else
  return -1;
#endif
}

// out[w] is the sum of warp w's values; path[w] says which branch computed it.
__global__ void warp_sums(const int* in, int* out, int* path) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
#if __CUDA_ARCH__ >= 800
  int total = __reduce_add_sync(0xffffffffu, v);
  int branch = 800;
#elif __CUDA_ARCH__ >= 700
  int total = v;
  for (int o = 16; o > 0; o /= 2) total += __shfl_xor_sync(0xffffffffu, total, o);
  int branch = 700;
#else
  int total = 0;  // what an empty kernel would leave: the check below fails on it
  int branch = 0;
#endif
  if (threadIdx.x % 32 == 0) {
    out[warp] = total;
    path[warp] = branch;
  }
}

__global__ void report_arch(int* arch) { *arch = compiled_arch(); }

int main() {
  const int blocks = 3, threads = 64, n = blocks * threads, warps = n / 32;
  std::vector<int> h_in(n);
  for (int i = 0; i < n; ++i) h_in[i] = (i * 7) % 11 - 5;
  int *d_in, *d_out, *d_path, *d_arch;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_out, warps * sizeof(int));
  cudaMalloc(&d_path, warps * sizeof(int));
  cudaMalloc(&d_arch, sizeof(int));
  cudaMemcpy(d_in, h_in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  warp_sums<<<blocks, threads>>>(d_in, d_out, d_path);
  report_arch<<<1, 1>>>(d_arch);
  std::vector<int> h_out(warps), h_path(warps);
  int arch = 0;
  cudaMemcpy(h_out.data(), d_out, warps * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(h_path.data(), d_path, warps * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(&arch, d_arch, sizeof(int), cudaMemcpyDeviceToHost);

  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  int device_arch = prop.major * 100 + prop.minor * 10;
  int bad = 0;
  for (int w = 0; w < warps; ++w) {
    int expect = 0;
    for (int i = w * 32; i < w * 32 + 32; ++i) expect += h_in[i];
    if (h_out[w] != expect || h_path[w] != (device_arch >= 800 ? 800 : 700)) {
      printf("warp %d: sum %d (expected %d) by the sm_%d branch\n", w, h_out[w], expect, h_path[w] / 10);
      ++bad;
    }
  }
#ifdef __CUDA_ARCH__
  const bool host_sees_arch = true;
#else
  const bool host_sees_arch = false;
#endif
  printf("device code compiled for __CUDA_ARCH__ %d; the device is sm_%d; host code sees %s\n", arch, device_arch / 10,
         host_sees_arch ? "__CUDA_ARCH__" : "no __CUDA_ARCH__");
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_path);
  cudaFree(d_arch);
  if (bad || arch != device_arch || host_sees_arch) {
    printf("Test FAILED\n");
    return 1;
  }
  printf("Test PASSED\n");
  return 0;
}

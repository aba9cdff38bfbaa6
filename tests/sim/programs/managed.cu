// Unified memory: one cudaMallocManaged array that the host fills, a kernel updates in place
// (a SAXPY), and the host checks, with a prefetch and no cudaMemcpy.
#include <cstdio>
#include <cstdlib>

__global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 12;
  float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0f;
    y[i] = (float)i;
  }
  int device = -1;
  cudaGetDevice(&device);
#if CUDART_VERSION >= 13000  // CUDA 13 takes a location and flags where CUDA 12 took a device number
  cudaMemLocation where = {};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  cudaMemPrefetchAsync(x, n * sizeof(float), where, 0, 0);
  cudaMemPrefetchAsync(y, n * sizeof(float), where, 0, 0);
#else
  cudaMemPrefetchAsync(x, n * sizeof(float), device, 0);
  cudaMemPrefetchAsync(y, n * sizeof(float), device, 0);
#endif
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  saxpy<<<2 * sms, 256>>>(n, 2.0f, x, y);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (y[i] != 2.0f + (float)i) ++bad;
  printf("%d of %d wrong\n", bad, n);
  cudaFree(x);
  cudaFree(y);
  printf("%s\n", bad == 0 ? "Test PASSED" : "Test FAILED");
  return bad == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

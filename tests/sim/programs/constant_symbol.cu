// A polynomial in __constant__ memory set with cudaMemcpyToSymbol, and a __device__ counter read
// back with cudaMemcpyFromSymbol.
#include <cstdio>
#include <cstdlib>

#define DEGREE 3
__constant__ float c_coeffs[DEGREE + 1];
__device__ unsigned int d_evaluated = 0;

__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = DEGREE; k >= 0; --k) acc = acc * x[i] + c_coeffs[k];  // Horner
  y[i] = acc;
  atomicAdd(&d_evaluated, 1u);
}

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t err_ = (call);                                                                    \
    if (err_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));    \
      exit(EXIT_FAILURE);                                                                         \
    }                                                                                             \
  } while (0)

int main() {
  const int n = 1000;
  const float coeffs[DEGREE + 1] = {1.0f, -2.0f, 0.5f, 0.25f};  // 1 - 2x + x^2/2 + x^3/4
  CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof(coeffs)));
  float hx[n], hy[n];
  for (int i = 0; i < n; ++i) hx[i] = (i % 17) * 0.25f - 2.0f;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, sizeof(hx)));
  CHECK(cudaMalloc(&dy, sizeof(hy)));
  CHECK(cudaMemcpy(dx, hx, sizeof(hx), cudaMemcpyHostToDevice));
  poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hy, dy, sizeof(hy), cudaMemcpyDeviceToHost));
  unsigned int evaluated = 0;
  CHECK(cudaMemcpyFromSymbol(&evaluated, d_evaluated, sizeof(evaluated)));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float x = hx[i], want = 1.0f - 2.0f * x + 0.5f * x * x + 0.25f * x * x * x;
    if (hy[i] != want) ++bad;
  }
  printf("evaluated %u points, %d wrong\n", evaluated, bad);
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  bool ok = bad == 0 && evaluated == (unsigned)n;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

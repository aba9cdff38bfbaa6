// Device pointers that stray from their buffers, as learners' kernels do: a wrong base far below
// the output, a bound that lets one thread write past the end, a buffer released before the
// kernel that reads it. With no argument the program runs the correct kernels and checks them;
// `wild`, `past` (with `a` or `out`: which buffer is allocated first) and `free` run one bug.
#include <cstdio>
#include <cstring>
#include <vector>

__global__ void scale(const float* a, float* out, int n, int past) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * a[i];
  if (i == n && past) out[i + past] = 0.0f;  // the bug: one thread writes past the end of out
}

__global__ void copy_with_base(const float* a, float* out, int n, long long base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* dst = out + base;  // the bug for base != 0: a wrong base, far outside every buffer
  if (i < n) dst[i] = a[i];
}

__global__ void gather(float* const* table, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[0][i];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const bool out_first = argc > 2 && std::strcmp(argv[2], "out") == 0;
  const int n = 1000;
  const size_t bytes = n * sizeof(float);
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i);
  float* a = nullptr;
  float* out = nullptr;
  if (out_first) {
    cudaMalloc(&out, bytes);
    cudaMalloc(&a, bytes);
  } else {
    cudaMalloc(&a, bytes);
    cudaMalloc(&out, bytes);
  }
  cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice);
  const int blocks = (n + 255) / 256;

  float* src = nullptr;  // a buffer that `gather` reads through a table of pointers
  cudaMalloc(&src, bytes);
  cudaMemcpy(src, h.data(), bytes, cudaMemcpyHostToDevice);
  float** table = nullptr;
  cudaMalloc(&table, sizeof(float*));
  cudaMemcpy(table, &src, sizeof(float*), cudaMemcpyHostToDevice);
  if (std::strcmp(mode, "free") == 0) cudaFree(src);  // the bug: released before the kernel that reads it

  scale<<<blocks, 256>>>(a, out, n, std::strcmp(mode, "past") == 0 ? 3000 : 0);
  copy_with_base<<<blocks, 256>>>(a, out, n, std::strcmp(mode, "wild") == 0 ? -2000000 : 0);
  gather<<<blocks, 256>>>(table, out, n);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::vector<float> r(n);
  cudaMemcpy(r.data(), out, bytes, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i)
    if (r[i] != h[i]) {
      std::printf("Test FAILED: out[%d] = %g, expected %g\n", i, r[i], h[i]);
      return 1;
    }
  std::printf("Test PASSED\n");
  cudaFree(table);
  if (std::strcmp(mode, "free") != 0) cudaFree(src);
  cudaFree(out);
  cudaFree(a);
  return 0;
}

// A single-pass sum with a last-block ticket, in the style of the threadFenceReduction sample:
// each block stores its partial sum, calls __threadfence() and takes a ticket from a __device__
// counter with atomicInc; the block that draws the last ticket adds the partials. The PTX memory
// model requires the reader to acquire too (a fence after its atomic): run with `--reader-fence`
// to add it. Without it the simulator reports the missing acquire.
#include <cstdio>
#include <cstring>

__device__ unsigned int blocks_done = 0;

__global__ void sum(const float* in, int n, float* partials, float* total, bool reader_fence) {
  __shared__ float s[128];
  __shared__ bool is_last;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = s[0];  // @partial-store
    __threadfence();
    unsigned int ticket = atomicInc(&blocks_done, gridDim.x);
    if (reader_fence) __threadfence();
    is_last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last && threadIdx.x == 0) {
    float t = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) t += partials[b];  // @partial-load
    *total = t;
    blocks_done = 0;
  }
}

int main(int argc, char** argv) {
  const bool reader_fence = argc > 1 && std::strcmp(argv[1], "--reader-fence") == 0;
  const int n = 4096, threads = 128, blocks = n / threads;
  float h[n];
  for (int i = 0; i < n; ++i) h[i] = float(i % 10);
  float *d_in, *d_partials, *d_total;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_partials, blocks * sizeof(float));
  cudaMalloc(&d_total, sizeof(float));
  cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
  sum<<<blocks, threads>>>(d_in, n, d_partials, d_total, reader_fence);
  float total = 0;
  cudaMemcpy(&total, d_total, sizeof(float), cudaMemcpyDeviceToHost);
  float want = 0;
  for (int i = 0; i < n; ++i) want += h[i];
  const bool ok = total == want;
  printf("total %.1f (expected %.1f)\n%s\n", total, want, ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_in);
  cudaFree(d_partials);
  cudaFree(d_total);
  return ok ? 0 : 1;
}

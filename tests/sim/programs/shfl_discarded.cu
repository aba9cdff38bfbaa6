// A warp sum over the live lanes only: threads past the end of the input return, the others take
// the mask of live lanes from __ballot_sync and run a shuffle tree in which a lane adds what it
// read only when that lane is live (`lane + offset < live`). Lanes near the end still read lanes
// that returned (the shuffle runs for every live lane), get an undefined value and discard it:
// legal CUDA. Lane 0's sum never depends on those reads, so the result is exact.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

__global__ void warp_sums(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned live_mask = __ballot_sync(0xffffffffu, i < n);
  if (i >= n) return;
  int lane = threadIdx.x % 32;
  int live = __popc(live_mask);
  float v = in[i];
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_down_sync(live_mask, v, offset);
    if (lane + offset < live) v += other;
  }
  if (lane == 0) out[i / 32] = v;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;  // 1000 = 31 full warps and one of 8 live lanes
  int warps = (n + 31) / 32, threads = 128, blocks = (warps * 32 + threads - 1) / threads;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = (float)(i % 13);
  float *d_in, *d_out;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, warps * sizeof(float));
  cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  warp_sums<<<blocks, threads>>>(d_in, d_out, n);
  std::vector<float> out(warps);
  cudaMemcpy(out.data(), d_out, warps * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int w = 0; w < warps; ++w) {
    float expect = 0;
    for (int i = w * 32; i < n && i < w * 32 + 32; ++i) expect += in[i];
    if (out[w] != expect && bad++ < 5) printf("warp %d: %g, expected %g\n", w, out[w], expect);
  }
  printf("n = %d: %d of %d warp sums differ\n", n, bad, warps);
  cudaFree(d_in);
  cudaFree(d_out);
  printf(bad ? "Test FAILED\n" : "Test PASSED\n");
  return bad ? 1 : 0;
}

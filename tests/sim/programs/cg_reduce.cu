// A block sum with cooperative groups: warp tiles reduce with cg::reduce, the block meets at
// block.sync(), and the first tile adds the partial sums with shfl_down.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

__global__ void reduce_cg(const float* in, float* block_sums, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ float warp_sums[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    float s = tile.thread_rank() < tile.meta_group_size() ? warp_sums[tile.thread_rank()] : 0.0f;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) s += tile.shfl_down(s, offset);
    if (tile.thread_rank() == 0) block_sums[blockIdx.x] = s;
  }
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  const int threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<float> h(n);
  double expected = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = (float)(i % 10);
    expected += h[i];
  }
  float *d_in, *d_sums;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_sums, blocks * sizeof(float));
  cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  reduce_cg<<<blocks, threads>>>(d_in, d_sums, n);
  std::vector<float> sums(blocks);
  cudaMemcpy(sums.data(), d_sums, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  double total = 0;
  for (float s : sums) total += s;
  printf("n = %d, sum = %.0f, expected %.0f\n", n, total, expected);
  cudaFree(d_in);
  cudaFree(d_sums);
  bool ok = total == expected;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

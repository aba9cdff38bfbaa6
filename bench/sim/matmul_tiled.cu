// A tiled matrix product shaped like NVIDIA's matrixMul sample at its default size, written here
// for scripts/bench_sim.py: C (640 x 320) = A (320 x 320) * B (640 x 320 wide), blocks of 32 x 32
// threads (200 blocks of 1024), each block walking 10 tiles of A and B through shared memory with
// two __syncthreads() per tile (20 barriers a thread), one warm-up launch then ITERS timed ones.
//   python3 scripts/puzzle.py sim bench/sim/matmul_tiled.cu -- [ITERS]   (default 300)
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int TILE = 32;

__global__ void matmul_tiled(float* c, const float* a, const float* b, int a_cols, int b_cols) {
  __shared__ float ta[TILE][TILE];
  __shared__ float tb[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < a_cols; t += TILE) {
    ta[threadIdx.y][threadIdx.x] = a[row * a_cols + t + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * b_cols + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * b_cols + col] = acc;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 300;
  const int a_rows = 10 * TILE, a_cols = 10 * TILE, b_cols = 20 * TILE;  // B has a_cols rows
  std::vector<float> ha(size_t(a_rows) * a_cols), hb(size_t(a_cols) * b_cols), hc(size_t(a_rows) * b_cols);
  for (size_t i = 0; i < ha.size(); ++i) ha[i] = float(i % 7) * 0.25f;
  for (size_t i = 0; i < hb.size(); ++i) hb[i] = float(i % 5) * 0.5f;
  float *a, *b, *c;
  cudaMalloc(&a, ha.size() * sizeof(float));
  cudaMalloc(&b, hb.size() * sizeof(float));
  cudaMalloc(&c, hc.size() * sizeof(float));
  cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE), grid(b_cols / TILE, a_rows / TILE);
  for (int i = 0; i < 1 + iters; ++i) matmul_tiled<<<grid, block>>>(c, a, b, a_cols, b_cols);
  cudaDeviceSynchronize();
  cudaMemcpy(hc.data(), c, hc.size() * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int r = 0; r < a_rows; r += 37)
    for (int col = 0; col < b_cols; col += 41) {
      float want = 0.0f;
      for (int k = 0; k < a_cols; ++k) want += ha[size_t(r) * a_cols + k] * hb[size_t(k) * b_cols + col];
      float got = hc[size_t(r) * b_cols + col];
      if (got - want > 1e-3f * want + 1e-3f || want - got > 1e-3f * want + 1e-3f) ++bad;
    }
  std::printf("matmul_tiled: %d launches of %u blocks of %u threads: %s\n", 1 + iters, grid.x * grid.y, block.x * block.y,
              bad ? "WRONG" : "ok");
  return bad ? 1 : 0;
}

// The engine's fast paths, on the cases they could get wrong: built-in variables read across
// barriers (the compiler keeps them in registers there: each thread must still see its own, under
// every schedule), blocks of different shapes one after another on one worker (the thread layout
// is reused only for the same shape), and a dynamic shared array read from a lambda without
// captures (cu2cpp.py keeps it thread-local in a file that has one; a local would not compile).
#include "sim_test.h"

using simtest::Buf;

// Every thread writes what it sees of threadIdx, blockIdx and blockDim after each barrier, and a
// neighbour's threadIdx.x through a shuffle.
__global__ void indices_across_barriers(int* out, int rounds) {
  const int per_block = int(blockDim.x * blockDim.y);
  const int lin = int(threadIdx.y * blockDim.x + threadIdx.x);
  const int block = int(blockIdx.y * gridDim.x + blockIdx.x);
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    const int other = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
    int* o = out + ((size_t(r) * gridDim.x * gridDim.y + block) * per_block + lin) * 4;
    o[0] = int(threadIdx.x + 100 * threadIdx.y);
    o[1] = int(blockIdx.x + 100 * blockIdx.y);
    o[2] = int(blockDim.x + 100 * blockDim.y);
    o[3] = other;
  }
}

static void check_indices(dim3 grid, dim3 block, int rounds) {
  const int per_block = int(block.x * block.y);
  const size_t n = size_t(rounds) * grid.x * grid.y * per_block * 4;
  Buf<int> out(n, -1);
  indices_across_barriers<<<grid, block>>>(out, rounds);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  std::vector<int> got = out.download();
  for (int r = 0; r < rounds; ++r)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned ty = 0; ty < block.y; ++ty)
          for (unsigned tx = 0; tx < block.x; ++tx) {
            const size_t lin = ty * block.x + tx;
            const int* o = &got[((size_t(r) * grid.x * grid.y + by * grid.x + bx) * per_block + lin) * 4];
            // The lane that xor 1 names: in the same row when blockDim.x is even.
            const unsigned partner = unsigned(lin ^ 1);
            REQUIRE(o[0] == int(tx + 100 * ty));
            REQUIRE(o[1] == int(bx + 100 * by));
            REQUIRE(o[2] == int(block.x + 100 * block.y));
            REQUIRE(o[3] == int(partner % block.x));
          }
}

TEST_CASE("engine: each thread keeps its own threadIdx, blockIdx and blockDim across barriers", "[engine][barrier]") {
  check_indices(dim3(3, 2), dim3(32, 2), 5);
  check_indices(dim3(2), dim3(256), 4);
}

TEST_CASE("engine: blocks of another shape with the same thread count get their own threadIdx", "[engine]") {
  // 32 threads each time, as 32x1, 8x4 and 4x8, then the first shape again; and a larger block.
  check_indices(dim3(2), dim3(32, 1), 2);
  check_indices(dim3(2), dim3(8, 4), 2);
  check_indices(dim3(2), dim3(4, 8), 2);
  check_indices(dim3(2), dim3(32, 1), 2);
  check_indices(dim3(1), dim3(64, 4), 2);
}

// `buf` is used by a lambda with no captures, which only a variable with static storage allows.
__global__ void lambda_reads_dynamic_shared(int* out) {
  extern __shared__ int buf[];
  auto mirrored = [](int i) { return buf[blockDim.x - 1 - i]; };
  buf[threadIdx.x] = int(threadIdx.x) * 2;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = mirrored(int(threadIdx.x));
}

TEST_CASE("engine: a lambda without captures reads extern __shared__ memory", "[engine][shared]") {
  const int tpb = 64, blocks = 3;
  Buf<int> out(size_t(blocks) * tpb, -1);
  lambda_reads_dynamic_shared<<<blocks, tpb, tpb * sizeof(int)>>>(out);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  std::vector<int> got = out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < tpb; ++t) REQUIRE(got[b * tpb + t] == (tpb - 1 - t) * 2);
}

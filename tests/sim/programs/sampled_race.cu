// A shared-memory race planted in one block of a grid, for the sampling of big launches
// (tests/python/test_sampling.py): in block RACE_BLOCK every thread stores the flag (the same
// value, so the thread orders agree and only the memory checker can see the race); elsewhere
// thread 0 alone does. RACE_BLOCK -1 plants none.
//   python3 scripts/puzzle.py sim tests/sim/programs/sampled_race.cu -- RACE_BLOCK [BLOCKS] [THREADS]
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void spread_flag(int* out, int race_block) {
  __shared__ int flag;
  if (threadIdx.x == 0 || (int)blockIdx.x == race_block) flag = 1;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = flag + (int)blockIdx.x;
}

int main(int argc, char** argv) {
  const int race_block = argc > 1 ? std::atoi(argv[1]) : -1;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 64, threads = argc > 3 ? std::atoi(argv[3]) : 64;
  const size_t n = size_t(blocks) * threads;
  int* out;
  cudaMalloc(&out, n * sizeof(int));
  spread_flag<<<blocks, threads>>>(out, race_block);
  std::vector<int> h(n);
  cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(out);
  for (size_t i = 0; i < n; ++i)
    if (h[i] != 1 + int(i / threads)) {
      std::printf("Test FAILED at %zu\n", i);
      return 1;
    }
  std::printf("Test PASSED\n");
  return 0;
}

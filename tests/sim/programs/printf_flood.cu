// A kernel whose printf output is far larger than the GPU's printf buffer: every thread prints one
// line per loop trip. On a GPU the buffer (cudaLimitPrintfFifoSize, 1 MiB by default) is circular
// and the oldest lines are overwritten; the program itself checks the kernel's real result.
//
//   printf_flood [lines per thread] [printf buffer bytes]
#include <cstdio>
#include <cstdlib>

__global__ void count_and_print(int* counts, int lines) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int c = 0;
  for (int i = 0; i < lines; ++i) {
    printf("thread %4d line %7d\n", t, i);
    ++c;
  }
  counts[t] = c;
}

int main(int argc, char** argv) {
  const int lines = argc > 1 ? std::atoi(argv[1]) : 20000;
  if (argc > 2) {
    size_t fifo = size_t(std::atoll(argv[2]));
    if (cudaDeviceSetLimit(cudaLimitPrintfFifoSize, fifo) != cudaSuccess) {
      std::fprintf(stderr, "cudaDeviceSetLimit failed\n");
      return 1;
    }
  }
  size_t fifo = 0;
  cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize);
  std::fprintf(stderr, "printf buffer: %zu bytes\n", fifo);
  const int threads = 256;
  int* d_counts;
  cudaMalloc(&d_counts, threads * sizeof(int));
  count_and_print<<<2, threads / 2>>>(d_counts, lines);
  int counts[threads];
  cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost);
  cudaFree(d_counts);
  for (int t = 0; t < threads; ++t)
    if (counts[t] != lines) {
      std::fprintf(stderr, "thread %d counted %d lines, expected %d\nTest FAILED\n", t, counts[t], lines);
      return 1;
    }
  std::fprintf(stderr, "Test PASSED\n");
  return 0;
}

// A program in three files: main.cu, its kernels in kernels.cuh, and host code in
// host_reference.cpp. Run it with
//   python3 scripts/puzzle.py sim tests/sim/programs/multi_file/main.cu tests/sim/programs/multi_file/host_reference.cpp
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels.cuh"

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  std::vector<unsigned char> h(n);
  for (int i = 0; i < n; ++i) h[i] = (unsigned char)((i * 7919) % 251);
  unsigned char* d_data;
  unsigned int* d_bins;
  cudaMalloc(&d_data, n);
  cudaMalloc(&d_bins, NUM_BINS * sizeof(unsigned int));
  cudaMemcpy(d_data, h.data(), n, cudaMemcpyHostToDevice);
  cudaMemset(d_bins, 0, NUM_BINS * sizeof(unsigned int));
  histogram(d_data, n, d_bins);
  unsigned int got[NUM_BINS], want[NUM_BINS];
  cudaMemcpy(got, d_bins, sizeof(got), cudaMemcpyDeviceToHost);
  histogram_reference(h.data(), n, want);
  int bad = 0;
  for (int b = 0; b < NUM_BINS; ++b) bad += got[b] != want[b];
  printf("n = %d: %d of %d bins differ\n", n, bad, NUM_BINS);
  cudaFree(d_data);
  cudaFree(d_bins);
  printf("%s\n", bad == 0 ? "Test PASSED" : "Test FAILED");
  return bad == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

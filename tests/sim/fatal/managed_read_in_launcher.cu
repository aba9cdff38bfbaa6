// While the puzzles' harness runs a case, device-to-host copies are forbidden (host_reads.cpp), and
// so is reading managed memory from host code between launches: a launcher could otherwise have a
// kernel copy the input into a cudaMallocManaged buffer and add it up on the CPU. A host write to
// managed memory (initialising a counter) stays allowed. Expected: the write passes, the read ends
// the process with exit 4 and the host_copy_in_launcher report.
#include <cstdio>

#include "cudasim/control.h"

__global__ void copy_in(const int* in, int* m, int n) {
  if ((int)threadIdx.x < n) m[threadIdx.x] = in[threadIdx.x];
}

int main() {
  const int n = 16;
  int *d_in, *m;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMemset(d_in, 0, n * sizeof(int));
  cudaMallocManaged(&m, n * sizeof(int));
  cudasim::set_device_to_host_copies_forbidden(true);
  m[0] = 5;  // a host write: allowed
  std::printf("host write to managed memory allowed\n");
  std::fflush(stdout);
  copy_in<<<1, n>>>(d_in, m, n);
  cudaDeviceSynchronize();
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += m[i];  // the bug: the answer computed on the CPU
  std::printf("unreachable: host sum %d\n", sum);
  return 0;
}

// Reads element 1000 of a 5-int buffer: far past the alignment slack, into the guard page that
// follows every cudaMalloc buffer. Expected: exit 4; the memory checker names a[1000] and the
// line before the read happens; with CUDASIM_CHECKS=0 the guard page's SIGSEGV handler names the
// buffer and the element.
#include <cstdio>

__global__ void read_far(const int* a, int* out) {
  int i = threadIdx.x;
  if (blockIdx.x == 1 && i == 3) i = 1000;  // the bug: no bounds check
  out[blockIdx.x * blockDim.x + threadIdx.x] = a[i];
}

int main() {
  int* a;
  int* out;
  cudaMalloc(&a, 5 * sizeof(int));
  cudaMalloc(&out, 10 * sizeof(int));
  cudaMemset(a, 0, 5 * sizeof(int));
  read_far<<<2, 5>>>(a, out);
  cudaDeviceSynchronize();
  std::printf("unreachable: the read did not fault\n");
  return 0;
}

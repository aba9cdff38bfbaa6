// `*out += x` from every thread of 4 blocks: a read-modify-write hazard. The memory checker runs
// the first schedule on one worker, so the report (count and first pair included) is the same
// whatever CUDASIM_WORKERS says. Expected: exit 3.
#include <cstdio>

__global__ void plus_equals(int* out, int x) {
  *out += x;
}

int main() {
  int* out;
  cudaMalloc(&out, sizeof(int));
  cudaMemset(out, 0, sizeof(int));
  plus_equals<<<4, 64>>>(out, 1);
  std::printf("unreachable: no race found\n");
  return 0;
}

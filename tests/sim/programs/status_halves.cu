// A status word published as two 32-bit atomics: the value half, then the flag half. A reader that
// loads the whole 64-bit word (volatile by default, `--plain` for a plain load) can see the flag
// without the value, or the value of another publication: the two atomics are not one. The fix is
// one 64-bit atomicExch of the packed word (`--packed`), read with a volatile 64-bit load.
#include <cstdio>
#include <cstring>

enum Mode { Volatile, Plain, Packed };

__global__ void publish_and_read(unsigned long long* status, unsigned long long* seen, Mode mode) {
  unsigned* halves = reinterpret_cast<unsigned*>(status);
  if (threadIdx.x == 0) {
    if (mode == Packed) {
      atomicExch(status, (1ull << 32) | 7ull);
    } else {
      atomicExch(&halves[0], 7u);  // @value-half
      atomicExch(&halves[1], 1u);  // @flag-half
    }
  } else if (threadIdx.x == 32) {
    unsigned long long w;
    if (mode == Plain) w = *status;  // @plain-read
    else w = *reinterpret_cast<volatile unsigned long long*>(status);  // @volatile-read
    // Either nothing yet or the whole publication; a half would be a torn read.
    *seen = (w == 0 || w == ((1ull << 32) | 7ull)) ? 1 : 0;
  }
  __syncthreads();
}

int main(int argc, char** argv) {
  Mode mode = Volatile;
  if (argc > 1 && std::strcmp(argv[1], "--plain") == 0) mode = Plain;
  if (argc > 1 && std::strcmp(argv[1], "--packed") == 0) mode = Packed;
  unsigned long long *d_status, *d_seen;
  cudaMalloc(&d_status, sizeof(unsigned long long));
  cudaMalloc(&d_seen, sizeof(unsigned long long));
  cudaMemset(d_status, 0, sizeof(unsigned long long));
  publish_and_read<<<1, 64>>>(d_status, d_seen, mode);
  unsigned long long seen = 0;
  cudaMemcpy(&seen, d_seen, sizeof seen, cudaMemcpyDeviceToHost);
  printf("%s\n", seen == 1 ? "Test PASSED" : "Test FAILED");
  cudaFree(d_status);
  cudaFree(d_seen);
  return seen == 1 ? 0 : 1;
}

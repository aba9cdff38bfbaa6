// The GPU-only part of `--bench` (harness/src/bench.cpp): CUB baselines and the L2 flush.
// Compiled by nvcc into the GPU harness only; the CPU simulator has no CUB.
#include <cub/cub.cuh>

#include "harness/bench.h"

namespace harness {
namespace bench {

bool cub_available() { return true; }

void cub_sum(void* temp, size_t& temp_bytes, const int* in, int* out, long long n) {
  cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n);
}

void cub_max(void* temp, size_t& temp_bytes, const float* in, float* out, long long n) {
  cub::DeviceReduce::Max(temp, temp_bytes, in, out, n);
}

void cub_inclusive_sum(void* temp, size_t& temp_bytes, const int* in, int* out, long long n) {
  cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n);
}

namespace detail {

// Reads the whole buffer (twice the L2's size), which evicts whatever the next timed run would
// otherwise find in the L2. Reading rather than writing leaves no dirty lines behind, whose
// write-back would slow down the run being timed.
__global__ void flush_l2_kernel(const int* buf, size_t n, int* sink) {
  int x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) x ^= buf[i];
  if (x == 0x7fffffff) sink[blockIdx.x] = x;  // never true for a zeroed buffer; keeps the loads
}

void flush_l2(const int* buf, size_t n, int* sink) { flush_l2_kernel<<<1024, 256>>>(buf, n, sink); }

}  // namespace detail

}  // namespace bench
}  // namespace harness

// Host memory per byte of device memory: allocates MIB MiB of device memory, fills it with a
// cudaMemset (as in issue 22) or, with "kernel", with a kernel, then sums it with a kernel (512
// blocks of 256 threads, a big launch: sampled with the checks on), and prints the process's peak
// resident memory (VmHWM) beyond what it used before the allocation, per device byte. scripts/bench_sim.py runs it with the checks off and on.
//   python3 scripts/puzzle.py sim bench/sim/memory_figure.cu -- [MIB] [memset|kernel]
#include <cstdio>
#include <cstdlib>
#include <cstring>

static long vm_hwm_kib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  std::fclose(f);
  return kib;
}

// Grid-stride loops: a grid of kBlocks blocks whatever the size.
constexpr unsigned kBlocks = 512;

__global__ void fill(unsigned* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = unsigned(i * 2654435761u);
}

__global__ void block_sums(unsigned* sums, const unsigned* p, size_t n) {
  __shared__ unsigned part[256];
  unsigned sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) sum += p[i];
  part[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const bool by_kernel = argc > 2 && std::strcmp(argv[2], "kernel") == 0;
  const size_t bytes = mib << 20, n = bytes / 4, blocks = kBlocks;
  unsigned *p, *sums;
  cudaMalloc(&sums, blocks * sizeof(unsigned));  // small: allocated before the baseline
  cudaMemset(sums, 0, blocks * sizeof(unsigned));
  block_sums<<<1, 256>>>(sums, sums, 1);  // the simulator's workers and stacks exist before the baseline
  const long base = vm_hwm_kib();
  cudaMalloc(&p, bytes);
  if (by_kernel) fill<<<unsigned(blocks), 256>>>(p, n);
  else cudaMemset(p, 1, bytes);
  block_sums<<<unsigned(blocks), 256>>>(sums, p, n);
  unsigned first = 0;
  cudaMemcpy(&first, sums, sizeof first, cudaMemcpyDeviceToHost);
  const long peak = vm_hwm_kib();
  std::printf("memory_figure: %zu MiB of device memory (%s): peak resident %ld MiB beyond the baseline, %.2f host bytes "
              "per device byte (block 0 sums to %u)\n",
              mib, by_kernel ? "filled by a kernel" : "cudaMemset", (peak - base) / 1024, double(peak - base) * 1024.0 / double(bytes),
              first);
  return 0;
}

// Tuning the single-pass scan (solutions/p14/p14.cu, scan_single_pass) on a GPU: ints per thread
// (CHUNKS int4 loads) and threads per block, next to cub::DeviceScan::InclusiveSum and a
// device-to-device copy measured in the same process. Each configuration is checked against a CPU
// scan before it is timed. Median of --runs timed runs after 3 warm-ups, CUDA events, the L2
// flushed before each run while the input is under 4x the L2. One line per (size, config).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o p14_tune bench/tune/p14_single_pass.cu
//   ./p14_tune [--sizes 16,20,22,24,26,28,30] [--runs 30] [--only 4:256,8:512]
//
// --only keeps the listed CHUNKS:threads configurations (for ncu, which profiles one of them).
//
// Effective bandwidth counts 8 bytes per element (each int read once and written once).
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../solutions/p14/p14.cu"

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

__global__ void flush_kernel(const int* buf, size_t n, int* sink) {
  int x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) x ^= buf[i];
  if (x == 0x7fffffff) sink[blockIdx.x] = x;
}

struct Gpu {
  int* flush_buf = nullptr;
  size_t flush_n = 0;
  int* sink = nullptr;
  size_t l2 = 0;
};

template <typename F>
static float median_ms(const Gpu& g, bool flush, int runs, F&& launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> t;
  for (int i = 0; i < runs; ++i) {
    if (flush) flush_kernel<<<1024, 256>>>(g.flush_buf, g.flush_n, g.sink);
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

template <int C>
static void launch_single_pass(const int* in, int* out, unsigned long long* status, int n, int tpb) {
  const int tile_ints = tpb * 4 * C;
  const int tiles = (n + tile_ints - 1) / tile_ints;
  unsigned* ticket = reinterpret_cast<unsigned*>(status + tiles);
  cudaMemsetAsync(status, 0, (size_t)tiles * sizeof(unsigned long long) + sizeof(unsigned));
  scan_single_pass<C><<<tiles, tpb>>>(in, out, status, ticket, n);
}

struct Config {
  int chunks, tpb;
  void (*launch)(const int*, int*, unsigned long long*, int, int);
};

int main(int argc, char** argv) {
  std::vector<int> logs = {16, 18, 20, 22, 24, 26, 28, 30};
  int runs = 30;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      logs.clear();
      for (char* p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ",")) logs.push_back(std::atoi(p));
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = std::string(",") + argv[++i] + ",";
    }
  }
  using Launch = void (*)(const int*, int*, unsigned long long*, int, int);
  const std::pair<int, Launch> shapes[] = {{1, launch_single_pass<1>},   {2, launch_single_pass<2>},
                                           {4, launch_single_pass<4>},   {6, launch_single_pass<6>},
                                           {8, launch_single_pass<8>},   {12, launch_single_pass<12>},
                                           {16, launch_single_pass<16>}};
  std::vector<Config> configs;
  for (int tpb : {128, 256, 512, 1024})
    for (auto [c, f] : shapes) {
      const std::string key = "," + std::to_string(c) + ":" + std::to_string(tpb) + ",";
      if (only.empty() || only.find(key) != std::string::npos) configs.push_back({c, tpb, f});
    }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  Gpu g;
  g.l2 = p.l2CacheSize;
  g.flush_n = 2 * g.l2 / sizeof(int);
  CK(cudaMalloc(&g.flush_buf, g.flush_n * sizeof(int)));
  CK(cudaMemset(g.flush_buf, 0, g.flush_n * sizeof(int)));
  CK(cudaMalloc(&g.sink, 1024 * sizeof(int)));
  std::printf("# %s, %d SMs, L2 %zu MiB; median of %d runs after 3 warm-ups, CUDA events; GB/s = 8 bytes per int / time\n",
              p.name, p.multiProcessorCount, g.l2 >> 20, runs);
  for (int lg : logs) {
    const long long n = 1LL << lg;
    if (n > (1LL << 30)) continue;
    std::vector<int> h(n);
    unsigned s = 12345u + lg;
    for (long long i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      h[i] = int(s >> 24) - 128;
    }
    std::vector<int> ref(n);
    int run = 0;
    for (long long i = 0; i < n; ++i) ref[i] = run += h[i];
    int *in, *out;
    unsigned long long* status;
    CK(cudaMalloc(&in, n * sizeof(int)));
    CK(cudaMalloc(&out, n * sizeof(int)));
    CK(cudaMalloc(&status, (n / 128 + 2) * sizeof(unsigned long long)));
    CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    const bool flush = n * sizeof(int) < 4 * g.l2;
    const double bytes = 8.0 * n;
    float copy = median_ms(g, flush, runs, [&] { cudaMemcpyAsync(out, in, n * sizeof(int), cudaMemcpyDeviceToDevice); });
    size_t temp_bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n);
    void* temp;
    CK(cudaMalloc(&temp, temp_bytes));
    float cub_ms = median_ms(g, flush, runs, [&] { cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n); });
    std::printf("n=2^%d copy %.4f ms %.0f GB/s | cub %.4f ms %.0f GB/s\n", lg, copy, bytes / copy / 1e6, cub_ms,
                bytes / cub_ms / 1e6);
    for (const Config& c : configs) {
      CK(cudaMemset(out, 0, n * sizeof(int)));
      c.launch(in, out, status, int(n), c.tpb);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {  // e.g. too many registers for the block
        std::printf("n=2^%d chunks %2d tpb %4d not launched: %s\n", lg, c.chunks, c.tpb, cudaGetErrorString(e));
        continue;
      }
      CK(cudaDeviceSynchronize());
      std::vector<int> got(n);
      CK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
      long long bad = -1;
      for (long long i = 0; i < n && bad < 0; ++i)
        if (got[i] != ref[i]) bad = i;
      if (bad >= 0) {
        std::printf("n=2^%d chunks %d tpb %d WRONG at %lld\n", lg, c.chunks, c.tpb, bad);
        continue;
      }
      float ms = median_ms(g, flush, runs, [&] { c.launch(in, out, status, int(n), c.tpb); });
      std::printf("n=2^%d chunks %2d tpb %4d %.4f ms %6.0f GB/s %6.1f %% of copy %6.1f %% of cub\n", lg, c.chunks, c.tpb, ms,
                  bytes / ms / 1e6, 100.0 * copy / ms, 100.0 * cub_ms / ms);
    }
    std::fflush(stdout);
    cudaFree(temp);
    cudaFree(in);
    cudaFree(out);
    cudaFree(status);
  }
  return 0;
}

// The runtime API and device functions that teaching code and NVIDIA's samples use beyond the
// puzzles: device attributes, managed and stream-ordered memory, symbols, 2-D copies, occupancy,
// vector types, __half, integer intrinsics, and kernel parameters copied once on the host.
#include <cuda_fp16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "sim_test.h"

using simtest::Buf;
using simtest::iota;

TEST_CASE("the headers that helper_cuda.h tests for are there", "[api]") {
#if !defined(__DRIVER_TYPES_H__) || !defined(__CUDA_RUNTIME_H__) || !defined(CUDART_VERSION)
  FAIL("a guard macro of the CUDA runtime headers is missing");
#endif
  REQUIRE(CUDART_VERSION >= 11000);
  REQUIRE(cudaProfilerStart() == cudaSuccess);
  REQUIRE(cudaProfilerStop() == cudaSuccess);
}

TEST_CASE("cudaDeviceGetAttribute agrees with cudaGetDeviceProperties", "[api]") {
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  int v = -1;
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
  CHECK(v == p.major);
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  CHECK(v == p.multiProcessorCount);
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0) == cudaSuccess);
  CHECK(v == 1024);
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, 0) == cudaSuccess);
  CHECK(v == cudaComputeModeDefault);
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0) == cudaSuccess);
  CHECK(v == 32);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 1) == cudaErrorInvalidValue);
}

__global__ void add_one(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}

TEST_CASE("managed memory: host and kernels use one buffer", "[api][managed]") {
  const int n = 300;
  int* m = nullptr;
  REQUIRE(cudaMallocManaged(&m, n * sizeof(int)) == cudaSuccess);
  for (int i = 0; i < n; ++i) REQUIRE(m[i] == 0);  // starts zeroed
  for (int i = 0; i < n; ++i) m[i] = i;           // host writes, no copy
  REQUIRE(cudaMemPrefetchAsync(m, n * sizeof(int), 0) == cudaSuccess);
  add_one<<<(n + 127) / 128, 128>>>(m, n);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  for (int i = 0; i < n; ++i) REQUIRE(m[i] == i + 1);  // host reads the kernel's result
  std::vector<int> h(n);
  REQUIRE(cudaMemcpy(h.data(), m, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(h[n - 1] == n);
  REQUIRE(cudaMemcpy(m, h.data(), n * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaFree(m) == cudaSuccess);
  int host[4];
  CHECK(cudaMemPrefetchAsync(host, sizeof host, 0) == cudaErrorInvalidValue);  // not managed
  REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
}

__global__ void read_past_managed(const int* a, int* out) { out[threadIdx.x] = a[threadIdx.x]; }

TEST_CASE("a kernel reading past a managed buffer is out of bounds", "[api][managed]") {
  int* m = nullptr;
  REQUIRE(cudaMallocManaged(&m, 4 * sizeof(int)) == cudaSuccess);
  Buf<int> out(5, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { read_past_managed<<<1, 5>>>(m, out); });
  REQUIRE(std::string(e.kind) == "out-of-bounds");
  REQUIRE(std::string(e.diagnosis) == "out_of_bounds");
  REQUIRE_THAT(e.message, Catch::Contains("a[4]"));
  cudaFree(m);
}

TEST_CASE("cudaMallocAsync and cudaFreeAsync are cudaMalloc and cudaFree in stream order", "[api]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  int* d = nullptr;
  REQUIRE(cudaMallocAsync(&d, 64 * sizeof(int), s) == cudaSuccess);
  add_one<<<1, 64, 0, s>>>(d, 0);  // touches nothing: the buffer is still uninitialised
  REQUIRE(cudaMemsetAsync(d, 0, 64 * sizeof(int), s) == cudaSuccess);
  add_one<<<1, 64, 0, s>>>(d, 64);
  std::vector<int> h(64);
  REQUIRE(cudaMemcpyAsync(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(h == std::vector<int>(64, 1));
  REQUIRE(cudaFreeAsync(d, s) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

__constant__ float coeffs[4];
__device__ int counter;

__global__ void use_symbols(const float* in, float* out) {
  int i = threadIdx.x;
  out[i] = coeffs[0] + coeffs[1] * in[i] + coeffs[2] * in[i] * in[i] + coeffs[3];
  atomicAdd(&counter, 1);
}

TEST_CASE("cudaMemcpyToSymbol and cudaMemcpyFromSymbol", "[api][symbol]") {
  const float c[4] = {1.f, 2.f, 3.f, 0.5f};
  REQUIRE(cudaMemcpyToSymbol(coeffs, c, sizeof c) == cudaSuccess);
  int zero = 0;
  REQUIRE(cudaMemcpyToSymbol(counter, &zero, sizeof zero) == cudaSuccess);
  Buf<float> in(std::vector<float>{0.f, 1.f, 2.f}), out(3);
  use_symbols<<<1, 3>>>(in, out);
  REQUIRE(out.download() == std::vector<float>{1.5f, 6.5f, 17.5f});
  int count = -1;
  REQUIRE(cudaMemcpyFromSymbol(&count, counter, sizeof count) == cudaSuccess);
  REQUIRE(count == 3);
  float last = 0;
  REQUIRE(cudaMemcpyFromSymbol(&last, coeffs, sizeof last, 3 * sizeof(float)) == cudaSuccess);  // with an offset
  REQUIRE(last == 0.5f);
  SECTION("a copy past the symbol's end is refused") {
    float five[5] = {};
    REQUIRE(cudaMemcpyToSymbol(coeffs, five, sizeof five) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
  }
  SECTION("a device buffer given as the host side is refused") {
    REQUIRE(cudaMemcpyToSymbol(coeffs, in.get(), 3 * sizeof(float)) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(cudaMemcpyToSymbol(coeffs, in.get(), 3 * sizeof(float), 0, cudaMemcpyDeviceToDevice) == cudaSuccess);
    float back[3];
    REQUIRE(cudaMemcpyFromSymbol(back, coeffs, sizeof back) == cudaSuccess);
    REQUIRE(back[2] == 2.f);
  }
}

TEST_CASE("cudaMallocPitch, cudaMemcpy2D and cudaMemset2D copy rows", "[api][2d]") {
  const int w = 5, hgt = 3;
  std::vector<int> h(w * hgt);
  for (int i = 0; i < w * hgt; ++i) h[i] = i;
  int* d = nullptr;
  size_t pitch = 0;
  REQUIRE(cudaMallocPitch(&d, &pitch, w * sizeof(int), hgt) == cudaSuccess);
  REQUIRE(pitch >= w * sizeof(int));
  REQUIRE(pitch % 256 == 0);
  REQUIRE(cudaMemset2D(d, pitch, 0, w * sizeof(int), hgt) == cudaSuccess);
  REQUIRE(cudaMemcpy2D(d, pitch, h.data(), w * sizeof(int), (w - 1) * sizeof(int), hgt, cudaMemcpyHostToDevice) == cudaSuccess);
  std::vector<int> back(w * hgt, -1);
  REQUIRE(cudaMemcpy2D(back.data(), w * sizeof(int), d, pitch, w * sizeof(int), hgt, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int r = 0; r < hgt; ++r)
    for (int c = 0; c < w; ++c) REQUIRE(back[r * w + c] == (c < w - 1 ? r * w + c : 0));
  REQUIRE(cudaMemcpy2D(back.data(), 4, d, pitch, 8, 1, cudaMemcpyDeviceToHost) == cudaErrorInvalidPitchValue);
  REQUIRE(cudaGetLastError() == cudaErrorInvalidPitchValue);
  cudaFree(d);
}

TEST_CASE("the occupancy API follows the thread and shared memory limits", "[api][occupancy]") {
  int blocks = 0;
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 256, 0) == cudaSuccess);
  CHECK(blocks == 8);  // 2048 threads per multiprocessor
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 32, 0) == cudaSuccess);
  CHECK(blocks == 32);  // the block limit
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 64, 40 * 1024) == cudaSuccess);
  CHECK(blocks == 5);  // 228 KiB of shared memory
  int min_grid = 0, block = 0;
  REQUIRE(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, add_one) == cudaSuccess);
  CHECK(block == 1024);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  CHECK(min_grid == 2 * p.multiProcessorCount);
  REQUIRE(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, add_one, 0, 200) == cudaSuccess);
  CHECK(block == 192);
}

__global__ void vec_and_intrinsics(const uchar4* px, unsigned* out, long long* clocks) {
  int i = threadIdx.x;
  uchar4 p = px[i];
  out[i * 4 + 0] = umin(p.x + p.y, p.z + p.w);
  out[i * 4 + 1] = (unsigned)__mul24(-(i + 1), 0x1000001);  // bit 24 and up are ignored: -(i + 1) * 1
  out[i * 4 + 2] = __umul24(0xff000000u | (unsigned)i, 3u);
  // Unsigned keys compare as unsigned: 0x80000000 + i is the largest, 1 the smallest.
  unsigned key = (i == 5) ? 0x80000000u : (unsigned)(i + 1);
  out[i * 4 + 3] = __reduce_max_sync(0xffffffffu, key) == 0x80000000u && __reduce_min_sync(0xffffffffu, key) == 1u;
  long long t0 = clock64();
  long long t1 = clock64();
  clocks[i] = t1 - t0;
}

TEST_CASE("uchar4, umin, __mul24, unsigned __reduce_max/min_sync and clock64", "[api][device]") {
  static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4 is 4 bytes, 4-aligned");
  static_assert(sizeof(short2) == 4 && alignof(short4) == 8, "CUDA's short vector layout");
  static_assert(alignof(ulonglong2) == 16 && sizeof(char3) == 3, "CUDA's vector layout");
  std::vector<uchar4> h(32);
  for (int i = 0; i < 32; ++i) h[i] = make_uchar4(i, 2 * i, 200, (unsigned char)(250 - i));
  uchar4* d = nullptr;
  REQUIRE(cudaMalloc(&d, 32 * sizeof(uchar4)) == cudaSuccess);
  REQUIRE(cudaMemcpy(d, h.data(), 32 * sizeof(uchar4), cudaMemcpyHostToDevice) == cudaSuccess);
  Buf<unsigned> out(32 * 4, 0u);
  Buf<long long> clocks(32, 0LL);
  vec_and_intrinsics<<<1, 32>>>(d, out, clocks);
  std::vector<unsigned> got = out.download();
  std::vector<long long> ck = clocks.download();
  for (int i = 0; i < 32; ++i) {
    INFO("thread " << i);
    CHECK(got[i * 4 + 0] == std::min<unsigned>(3 * i, 450 - i));
    CHECK(got[i * 4 + 1] == (unsigned)(-(i + 1)));
    CHECK(got[i * 4 + 2] == (unsigned)i * 3u);
    CHECK(got[i * 4 + 3] == 1u);
    CHECK(ck[i] > 0);
  }
  cudaFree(d);
}

TEST_CASE("__half converts with round to nearest even", "[api][half]") {
  CHECK(__half2float(__float2half(1.0f)) == 1.0f);
  CHECK(__half2float(__float2half(65504.f)) == 65504.f);                 // the largest half
  CHECK(std::isinf(__half2float(__float2half(65520.f))));                 // rounds up to infinity
  CHECK(__half2float(__float2half(1.0f + 1.0f / 2048)) == 1.0f);         // a tie rounds to even
  CHECK(__half2float(__float2half(1.0f + 3.0f / 2048)) == 1.0f + 2.0f / 1024);
  CHECK(__half2float(__float2half(5.960464477539063e-8f)) == 5.960464477539063e-8f);  // the smallest subnormal
  CHECK(__half_as_ushort(__float2half(-2.0f)) == 0xc000);
  __half a = __float2half(1.5f), b = __float2half(2.25f);
  CHECK(__half2float(__hadd(a, b)) == 3.75f);
  CHECK(__half2float(a * b) == 3.375f);
  CHECK(__hlt(a, b));
  float2 f = __half22float2(__floats2half2_rn(0.5f, -4.f));
  CHECK((f.x == 0.5f && f.y == -4.f));
}

// A by-value parameter with a destructor (CUDA by Example's Lock): the kernel gets a bitwise copy,
// and the copy is made and destroyed on the host once per launch, not once per thread.
static int g_copies = 0, g_destroyed = 0;
struct Counted {
  int* flag;
  Counted(int* f) : flag(f) {}
  Counted(const Counted& o) : flag(o.flag) { ++g_copies; }
  ~Counted() { ++g_destroyed; }
};

__global__ void uses_counted(Counted c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(c.flag, 1);
}

__global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }

TEST_CASE("a kernel parameter with a destructor is copied and destroyed once, on the host", "[api][params]") {
  Buf<int> flag(1, 0);
  {
    Counted c(flag.get());
    g_copies = g_destroyed = 0;
    uses_counted<<<4, 64>>>(c, 200);
    CHECK(g_copies == 1);
    CHECK(g_destroyed == 1);
  }
  REQUIRE(flag.download()[0] == 200);
}

TEST_CASE("a kernel launched through a function pointer", "[api][params]") {
  void (*k)(float*, float) = scale;
  Buf<float> a(std::vector<float>{1.f, 2.f});
  k<<<1, 2>>>(a, 3.f);
  REQUIRE(a.download() == std::vector<float>{3.f, 6.f});
}

// `extern float __shared__` (the type before the qualifier) and `float __shared__` work as the
// usual order does.
__global__ void reverse_block(const float* in, float* out) {
  extern float __shared__ buf[];
  float __shared__ total;
  int i = threadIdx.x;
  buf[i] = in[i];
  if (i == 0) total = 0;
  __syncthreads();
  out[i] = buf[blockDim.x - 1 - i];
  atomicAdd(&total, in[i]);
  __syncthreads();
  if (i == 0) out[blockDim.x] = total;
}

TEST_CASE("extern float __shared__ and float __shared__ declarations", "[api][shared]") {
  Buf<float> in(std::vector<float>{1.f, 2.f, 3.f, 4.f}), out(5, 0.f);
  reverse_block<<<1, 4, 4 * sizeof(float)>>>(in, out);
  REQUIRE(out.download() == std::vector<float>{4.f, 3.f, 2.f, 1.f, 10.f});
}

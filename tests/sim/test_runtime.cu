// The runtime API as a learner's host code meets it: copy directions, launch limits, shared memory
// limits, host pointers passed to kernels, and recovery after a kernel error.
#include "sim_test.h"

using simtest::Buf;
using simtest::iota;

__global__ void set_to(int* a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

TEST_CASE("cudaMemcpy checks the direction against the pointers", "[runtime][memcpy]") {
  Buf<int> d(iota(8));
  std::vector<int> h(8, -1);
  REQUIRE(cudaGetLastError() == cudaSuccess);

  SECTION("host and device swapped in a host-to-device copy") {
    REQUIRE(cudaMemcpy(h.data(), d.get(), 8 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaSuccess);  // reading it clears it
    REQUIRE(h == std::vector<int>(8, -1));
  }
  SECTION("host and device swapped in a device-to-host copy") {
    REQUIRE(cudaMemcpy(d.get(), h.data(), 8 * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    REQUIRE(cudaPeekAtLastError() == cudaErrorInvalidValue);
    REQUIRE(cudaPeekAtLastError() == cudaErrorInvalidValue);  // peeking does not clear it
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(d.download() == iota(8));
  }
  SECTION("device memory where the direction says host memory") {
    Buf<int> d2(8, 0);
    // Both are device buffers; cudaMemcpyHostToDevice says the source is host memory.
    REQUIRE(cudaMemcpy(d2.get(), d.get(), 8 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(d2.download() == std::vector<int>(8, 0));
  }
  SECTION("a host pointer in a device-to-device copy") {
    REQUIRE(cudaMemcpy(d.get(), h.data(), 8 * sizeof(int), cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
  }
  SECTION("a copy that overruns the device buffer") {
    std::vector<int> big(9, 3);
    REQUIRE(cudaMemcpy(d.get(), big.data(), 9 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    REQUIRE(cudaMemcpy(h.data(), d.get() + 4, 5 * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(d.download() == iota(8));
  }
  SECTION("correct copies, also at an offset and device to device") {
    REQUIRE(cudaMemcpy(h.data(), d.get() + 3, 5 * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(h == std::vector<int>{3, 4, 5, 6, 7, -1, -1, -1});
    Buf<int> d2(8, 0);
    REQUIRE(cudaMemcpy(d2.get(), d.get(), 8 * sizeof(int), cudaMemcpyDeviceToDevice) == cudaSuccess);
    REQUIRE(d2.download() == iota(8));
    REQUIRE(cudaGetLastError() == cudaSuccess);
  }
}

TEST_CASE("cudaMalloc memory is not zeroed", "[runtime][memory]") {
  Buf<unsigned> d(4);
  REQUIRE(d.download() == std::vector<unsigned>(4, 0xCDCDCDCDu));
}

// Device buffers share one reserved arena: freed slots are reused (after a quarantine that keeps
// a use after free pointing at the released buffer), so a program that allocates and frees in a
// loop neither runs out nor walks through the arena.
TEST_CASE("cudaMalloc and cudaFree in a loop reuse the arena", "[runtime][memory][arena]") {
  const size_t mb = size_t(1) << 20;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  int* keep = nullptr;  // a live buffer between the iterations: reuse must work around it
  REQUIRE(cudaMalloc(&keep, 4096) == cudaSuccess);
  for (int it = 0; it < 10000; ++it) {
    int* p = nullptr;
    cudaError_t e = cudaMalloc(&p, mb);
    if (e != cudaSuccess) FAIL("cudaMalloc of 1 MB failed in iteration " << it);
    lo = std::min(lo, reinterpret_cast<uintptr_t>(p));
    hi = std::max(hi, reinterpret_cast<uintptr_t>(p));
    if (it % 1000 == 0) {  // the memory works: a kernel writes it, the host reads it back
      set_to<<<1, 256>>>(p, 256, it);
      std::vector<int> h(256);
      REQUIRE(cudaMemcpy(h.data(), p, 256 * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
      REQUIRE(h == std::vector<int>(256, it));
    }
    REQUIRE(cudaFree(p) == cudaSuccess);
  }
  // 10000 fresh slots of at least 1 MB and their gaps would span tens of GiB; reused ones stay
  // within the quarantine's few GiB.
  INFO("the loop's buffers spanned " << (hi - lo) / mb << " MB");
  REQUIRE(hi - lo < (size_t(8) << 30));
  REQUIRE(cudaFree(keep) == cudaSuccess);
}

TEST_CASE("launch configuration limits: the launch fails and the kernel does not run", "[runtime][launch]") {
  Buf<int> a(2048, 0);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  auto untouched = [&] { return a.download() == std::vector<int>(2048, 0); };

  SECTION("1025 threads per block") {
    set_to<<<1, 1025>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(untouched());
  }
  SECTION("32 x 33 threads per block") {
    set_to<<<1, dim3(32, 33)>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(untouched());
  }
  SECTION("blockDim.z of 65") {
    set_to<<<1, dim3(1, 1, 65)>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(untouched());
  }
  SECTION("an empty grid") {
    set_to<<<0, 32>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(untouched());
  }
  SECTION("more than 48 KiB of dynamic shared memory") {
    set_to<<<1, 32, 48 * 1024 + 4>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(untouched());
  }
  SECTION("the limits themselves are fine") {
    set_to<<<2, 1024, 48 * 1024>>>(a, 2048, 1);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    REQUIRE(a.download() == std::vector<int>(2048, 1));
  }
}

__global__ void big_static_shared(int* out) {
  __shared__ char big[49 * 1024];  // @big-static
  big[threadIdx.x] = 1;
  out[threadIdx.x] = big[threadIdx.x];
}
template <class T>
__global__ void big_static_shared_template(T* out) {
  __shared__ T tile[13 * 1024];  // 52 KiB of float
  tile[threadIdx.x] = T(1);
  out[threadIdx.x] = tile[threadIdx.x];
}
__global__ void static_plus_dynamic(int* out) {
  __shared__ float tile[10 * 1024];  // 40 KiB
  extern __shared__ float rest[];
  tile[threadIdx.x] = 1.f;
  rest[threadIdx.x] = 2.f;
  out[threadIdx.x] = int(tile[threadIdx.x] + rest[threadIdx.x]);
}

__global__ void halves_48k(int* out, int unused) {
  __shared__ int s0, s1, s2, s3;  // 16 bytes
  __shared__ float a[6144];       // 24 KiB
  __shared__ float b[6140];       // 24 KiB - 16 bytes: 49152 bytes in all
  if (threadIdx.x == 0) s0 = 1, s1 = 2, s2 = 3, s3 = 4;
  a[threadIdx.x] = 5.f;
  b[threadIdx.x] = 6.f;
  __syncthreads();
  out[threadIdx.x] = s0 + s1 + s2 + s3 + int(a[threadIdx.x] + b[threadIdx.x]) + unused;
}

TEST_CASE("static shared memory over 48 KiB is a kernel error", "[runtime][shared]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { big_static_shared<<<1, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "launch");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::Contains("more than 49152 bytes (48 KiB) of shared memory") &&
                              Catch::Contains("(50176 bytes of __shared__ variables so far, 0 dynamic)") &&
                              Catch::Contains("big (50176 bytes) at " + SITE("@big-static")));

  Buf<float> fout(32, 0.f);
  e = simtest::kernel_error([&] { big_static_shared_template<float><<<1, 32>>>(fout); });
  REQUIRE(std::string(e.kind) == "launch");
  REQUIRE_THAT(e.message, Catch::Contains("(53248 bytes of __shared__ variables so far, 0 dynamic)"));

  // 40 KiB static + 10 KiB dynamic: over; 40 KiB + 8 KiB: exactly the limit, fine.
  e = simtest::kernel_error([&] { static_plus_dynamic<<<1, 32, 10 * 1024>>>(out); });
  REQUIRE(std::string(e.kind) == "launch");
  REQUIRE_THAT(e.message, Catch::Contains("(40960 bytes of __shared__ variables so far, 10240 dynamic)"));
  static_plus_dynamic<<<1, 32, 8 * 1024>>>(out);
  REQUIRE(out.download() == std::vector<int>(32, 3));

  // Exactly 48 KiB in several variables is fine (the simulator's canary gaps between arrays do
  // not count); 4 bytes more is not.
  halves_48k<<<1, 32>>>(out, 0);
  REQUIRE(out.download() == std::vector<int>(32, 1 + 2 + 3 + 4 + 5 + 6));
  e = simtest::kernel_error([&] { halves_48k<<<1, 32, 4>>>(out, 0); });
  REQUIRE(std::string(e.kind) == "launch");
  REQUIRE_THAT(e.message, Catch::Contains("(49152 bytes of __shared__ variables so far, 4 dynamic)"));
}

__global__ void copy_kernel(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

TEST_CASE("a host pointer passed to a kernel is a kernel error", "[runtime][pointer]") {
  std::vector<int> host(16, 1);
  Buf<int> d(16, 0);
  int on_stack[4] = {};
  cudasim::KernelError e = simtest::kernel_error([&] { copy_kernel<<<1, 16>>>(host.data(), d, 16); });
  REQUIRE(std::string(e.kind) == "pointer");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::Contains("kernel copy_kernel") && Catch::Contains("argument 1 of the kernel") &&
                              Catch::Contains("not device memory") && Catch::Contains("cudaMemcpy"));
  e = simtest::kernel_error([&] { copy_kernel<<<1, 4>>>(d, on_stack, 4); });
  REQUIRE(std::string(e.kind) == "pointer");
  REQUIRE_THAT(e.message, Catch::Contains("argument 2 of the kernel"));
  REQUIRE(d.download() == std::vector<int>(16, 0));  // the kernel did not run

  // Null, and pointers into the middle of a buffer, are fine.
  Buf<int> src(simtest::iota(16));
  copy_kernel<<<1, 8>>>(src.get() + 8, d.get() + 8, 8);
  copy_kernel<<<1, 8>>>(nullptr, d, 0);
  std::vector<int> got = d.download();
  for (int i = 0; i < 16; ++i) REQUIRE(got[i] == (i < 8 ? 0 : i));
}

__global__ void fault_if(int* a, int bad) {
  if (bad && threadIdx.x == 3) __syncwarp(0x1u);  // lane 3 is not in the mask
  a[blockIdx.x * blockDim.x + threadIdx.x] = 5;  // each block its own elements
}

TEST_CASE("after a kernel error (ErrorMode::Throw), later launches run normally", "[runtime][recovery]") {
  Buf<int> a(64, 0);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    cudasim::KernelError e = simtest::kernel_error([&] { fault_if<<<4, 16>>>(a, 1); });
    REQUIRE(std::string(e.kind) == "warp");
    cudaMemset(a, 0, 64 * sizeof(int));
    fault_if<<<4, 16>>>(a, 0);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    std::vector<int> got = a.download();
    REQUIRE(got == std::vector<int>(64, 5));
  }
}

// Atomics from many blocks on several worker threads, and how float atomics meet the race check.
#include <algorithm>
#include <cmath>

#include "sim_test.h"

using simtest::Buf;

constexpr int kBlocks = 128, kThreads = 256, kN = kBlocks * kThreads;

__global__ void add_all(int* i, unsigned* u, float* f, double* d, unsigned long long* ull) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(i, g % 7 - 3);
  atomicAdd(u, 100000u);  // 32768 * 100000 > 2^31: exercises the unsigned range
  atomicAdd(f, float(g % 5));  // integer-valued, total < 2^24: exact in any order
  atomicAdd(d, double(g % 1000) * 1024.0);
  atomicAdd(ull, 1ull << 33);
}

TEST_CASE("atomicAdd on int, unsigned, float, double, unsigned long long from many blocks", "[atomics]") {
  Buf<int> i(1, 5);
  Buf<unsigned> u(1, 0u);
  Buf<float> f(1, 0.5f);
  Buf<double> d(1, 0.0);
  Buf<unsigned long long> ull(1, 0ull);
  add_all<<<kBlocks, kThreads>>>(i, u, f, d, ull);
  long long ei = 5, ed = 0;
  long long ef = 0;
  for (int g = 0; g < kN; ++g) {
    ei += g % 7 - 3;
    ef += g % 5;
    ed += (g % 1000) * 1024LL;
  }
  REQUIRE(i.download()[0] == ei);
  REQUIRE(u.download()[0] == unsigned(kN) * 100000u);
  REQUIRE(u.download()[0] > 0x80000000u);
  // Blocks run concurrently, so the order of the float additions varies from run to run; with
  // integer values (and the 0.5 start) every partial sum is exact, so the total is too.
  REQUIRE(f.download()[0] == float(double(ef) + 0.5));
  REQUIRE(d.download()[0] == double(ed));
  REQUIRE(ull.download()[0] == (unsigned long long)kN << 33);
}

// Float addition is not associative, and atomics from different threads land in an order that
// the thread schedule decides: thread 0 adds 1e8, the others add 1. Run forward, thread 0 goes
// first and every +1 is lost to rounding (the spacing of floats near 1e8 is 8); run in reverse,
// the ones add up to 63 first. The device memory differs between the 'forward' and 'reverse'
// runs, but only atomics wrote the element: atomics may run in any order, so that is not a race,
// only a note on stderr (tests/CMakeLists.txt checks the note on a program of its own, since it is
// given once per process). Integer-valued float sums below 2^24 (test above) are exact in any order.
__global__ void float_order(float* sum) { atomicAdd(sum, threadIdx.x == 0 ? 1e8f : 1.0f); }
// The same element, also written by a plain store: that difference is a race again.
__global__ void float_order_then_store(float* sum, float* copy) {
  atomicAdd(sum, threadIdx.x == 0 ? 1e8f : 1.0f);
  __syncthreads();
  if (threadIdx.x == 0) *copy = *sum;
}

TEST_CASE("float atomicAdd whose result depends on the order is not a race", "[atomics][race]") {
  Buf<float> sum(1, 0.0f), copy(1, 0.0f);
  float_order<<<1, 64>>>(sum.get());
  const float s = sum.download()[0];
  REQUIRE((s == 100000000.f || s == 100000064.f || (s > 1e8f && s < 1e8f + 64.f)));

  // A plain store of that sum differs between the schedules as well: the comparison reports it
  // (the checker finds no hazard: the read comes after the barrier).
  sum.upload({0.0f});
  cudasim::KernelError e = simtest::kernel_error([&] { float_order_then_store<<<1, 64>>>(sum.get(), copy.get()); });
  REQUIRE(std::string(e.kind) == "race");
  REQUIRE(std::string(e.diagnosis) == "race_schedule");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("in 'forward' order and in 'reverse' order wrote different values"));
  REQUIRE_THAT(e.message, Catch::Contains("100000000") && Catch::Contains("100000064"));
}

__global__ void min_max(const int* v, int n, int* mx, int* mn, unsigned* umx, unsigned* umn) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  atomicMax(mx, v[g]);
  atomicMin(mn, v[g]);
  atomicMax(umx, unsigned(v[g]));  // negative values become large unsigned ones
  atomicMin(umn, unsigned(v[g]) | 1u);
}

TEST_CASE("atomicMax and atomicMin, signed and unsigned", "[atomics]") {
  const int n = 20000;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = int((i * 7919LL) % 100003) - 50000;
  Buf<int> v(h), mx(1, INT_MIN), mn(1, INT_MAX);
  Buf<unsigned> umx(1, 0u), umn(1, 0xffffffffu);
  min_max<<<(n + 255) / 256, 256>>>(v, n, mx, mn, umx, umn);
  unsigned eumx = 0, eumn = 0xffffffffu;
  for (int x : h) {
    eumx = std::max(eumx, unsigned(x));
    eumn = std::min(eumn, unsigned(x) | 1u);
  }
  REQUIRE(mx.download()[0] == *std::max_element(h.begin(), h.end()));
  REQUIRE(mn.download()[0] == *std::min_element(h.begin(), h.end()));
  REQUIRE(umx.download()[0] == eumx);
  REQUIRE(umn.download()[0] == eumn);
}

// atomicCAS: an add built from a compare-and-swap loop (the classic pattern for types without a
// native atomic), from many blocks.
__device__ long long cas_add(unsigned long long* a, unsigned long long v) {
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, assumed + v);
  } while (assumed != old);
  return (long long)old;
}
__global__ void cas_sum(unsigned long long* total, int* i32) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  cas_add(total, (unsigned long long)g);
  int old = *i32, assumed;
  do {
    assumed = old;
    old = atomicCAS(i32, assumed, assumed + 3);
  } while (assumed != old);
}

// One block: every thread tries to claim a slot with atomicCAS; exactly one wins. Which one
// depends on the schedule, so the winner is checked and cleared inside the kernel.
__global__ void cas_claim(int* slot, int* results) {
  const int t = threadIdx.x;
  __shared__ int winners;
  if (t == 0) winners = 0;
  __syncthreads();
  if (atomicCAS(slot, -1, t) == -1) atomicAdd(&winners, 1);
  __syncthreads();
  if (t == 0) {
    results[0] = winners;
    results[1] = *slot >= 0 && *slot < int(blockDim.x);  // the slot holds a real thread id
    results[2] = atomicCAS(slot, 12345, 7) == *slot;  // a failed CAS returns the value and changes nothing
    *slot = -1;
  }
}

TEST_CASE("atomicCAS: CAS-loop add from many blocks, claim-once in a block", "[atomics]") {
  Buf<unsigned long long> total(1, 0ull);
  Buf<int> i32(1, 1);
  cas_sum<<<kBlocks, kThreads>>>(total, i32);
  REQUIRE(total.download()[0] == (unsigned long long)kN * (kN - 1) / 2);
  REQUIRE(i32.download()[0] == 1 + 3 * kN);

  Buf<int> slot(1, -1), results(3, 0);
  cas_claim<<<1, 256>>>(slot, results);
  std::vector<int> r = results.download();
  REQUIRE(r[0] == 1);
  REQUIRE(r[1] == 1);
  REQUIRE(r[2] == 1);
  REQUIRE(slot.download()[0] == -1);
}

// atomicExch: every thread swaps its id in; the values that come out are all ids but the last one
// in, plus the initial value. Their sum is the same in any order.
__global__ void exch(int* x, int* sum_out, float* fx) {
  const int t = threadIdx.x;
  int old = atomicExch(x, t);
  atomicAdd(sum_out, old);
  atomicExch(fx, 2.5f);
  __syncthreads();
  if (t == 0) atomicAdd(sum_out, atomicExch(x, 0));  // the last one in; leaves a fixed value
}

TEST_CASE("atomicExch on int and float", "[atomics]") {
  Buf<int> x(1, 1000), sum(1, 0);
  Buf<float> fx(1, 0.f);
  exch<<<1, 200>>>(x, sum, fx);
  REQUIRE(sum.download()[0] == 1000 + 199 * 200 / 2);
  REQUIRE(x.download()[0] == 0);
  REQUIRE(fx.download()[0] == 2.5f);
}

__global__ void bit_ops(unsigned* and_, unsigned* or_, unsigned* xor_, int* sub, unsigned* inc) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAnd(and_, ~(1u << (g % 32)) | (g % 64 >= 32 ? 0xffffffffu : 0u));  // clears bits of g%64 < 32
  atomicOr(or_, 1u << (g % 20));
  atomicXor(xor_, g);
  atomicSub(sub, 2);
  atomicInc(inc, 9u);  // counts 0..9 and wraps to 0
}

TEST_CASE("atomicAnd, atomicOr, atomicXor, atomicSub, atomicInc", "[atomics]") {
  Buf<unsigned> a(1, 0xffffffffu), o(1, 0u), x(1, 0u), inc(1, 0u);
  Buf<int> s(1, 0);
  const int n = 64 * 100;
  bit_ops<<<100, 64>>>(a, o, x, s, inc);
  unsigned ex = 0;
  for (unsigned g = 0; g < unsigned(n); ++g) ex ^= g;
  REQUIRE(a.download()[0] == 0u);
  REQUIRE(o.download()[0] == 0xfffffu);
  REQUIRE(x.download()[0] == ex);
  REQUIRE(s.download()[0] == -2 * n);
  REQUIRE(inc.download()[0] == unsigned(n % 10));
}

// A histogram: per-block counters in shared memory, merged into global memory with atomics.
__global__ void histogram(const int* v, int n, int* bins) {
  __shared__ int local[16];
  const int t = threadIdx.x;
  if (t < 16) local[t] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[v[i] & 15], 1);
  __syncthreads();
  if (t < 16) atomicAdd(&bins[t], local[t]);
}

TEST_CASE("shared-memory histogram merged with global atomics", "[atomics]") {
  const int n = 50000;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = int((i * 2654435761u) >> 7);
  Buf<int> v(h), bins(16, 0);
  histogram<<<37, 96>>>(v, n, bins);
  std::vector<int> expect(16, 0);
  for (int x : h) ++expect[x & 15];
  REQUIRE(bins.download() == expect);
}

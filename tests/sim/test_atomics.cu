// Atomics from many blocks on several worker threads, and how float atomics meet the race check.
#include <algorithm>
#include <cmath>

#include <cuda/atomic>

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
// The same element, also written by a plain store of a thread that used no atomic: that
// difference is a race again (thread 0 only copies; thread 1 adds the 1e8).
__global__ void float_order_then_store(float* sum, float* copy) {
  if (threadIdx.x != 0) atomicAdd(sum, threadIdx.x == 1 ? 1e8f : 1.0f);
  __syncthreads();
  if (threadIdx.x == 0) *copy = *sum;
}
// The copy made by a thread that took part in the atomic sum: its value came through atomics, so
// the difference between the schedules is the note, not an error.
__global__ void float_order_then_store_by_adder(float* sum, float* copy) {
  atomicAdd(sum, threadIdx.x == 1 ? 1e8f : 1.0f);
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

  sum.upload({0.0f});
  float_order_then_store_by_adder<<<1, 64>>>(sum.get(), copy.get());
  const float c = copy.download()[0];
  REQUIRE(c == sum.download()[0]);
  REQUIRE((c >= 1e8f && c <= 1e8f + 64.f));
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

// ---- scoped atomics and <cuda/atomic> (issue 19) ------------------------------------------------

// Every _block and _system form, within one block: each is atomic among the block's threads.
__global__ void scoped_forms(int* i, unsigned* u, unsigned long long* ull, float* f, double* d, long long* ll) {
  atomicAdd_block(&i[0], 1);
  atomicAdd_system(&i[1], 2);
  atomicSub_block(&i[2], 1);
  atomicMax_block(&i[3], int(threadIdx.x));
  atomicMin_system(&i[4], -int(threadIdx.x));
  atomicOr_block(&u[0], 1u << (threadIdx.x % 32));
  atomicAnd_system(&u[1], ~(1u << (threadIdx.x % 32)));
  atomicXor_block(&u[2], 1u);
  atomicInc_block(&u[3], 1000u);
  atomicDec_system(&u[4], 1000u);
  atomicAdd_block(ull, 3ull);
  atomicAdd_block(f, 0.5f);
  atomicAdd_system(d, 0.25);
  atomicMax_block(ll, (long long)threadIdx.x << 40);
  if (threadIdx.x == 7) atomicExch_block(&i[5], 77);
  atomicCAS_system(&i[6], 0, int(threadIdx.x) + 1);  // exactly one thread wins
}

TEST_CASE("atomicAdd_block, atomicAdd_system and the other scoped forms within one block", "[atomics][scope]") {
  Buf<int> i(std::vector<int>{0, 0, 0, -1, 0, 0, 0});
  Buf<unsigned> u(std::vector<unsigned>{0u, 0xffffffffu, 0u, 0u, 0u});
  Buf<unsigned long long> ull(1, 0ull);
  Buf<float> f(1, 0.0f);
  Buf<double> d(1, 0.0);
  Buf<long long> ll(1, 0LL);
  scoped_forms<<<1, 64>>>(i, u, ull, f, d, ll);
  std::vector<int> hi = i.download();
  REQUIRE(hi[0] == 64);
  REQUIRE(hi[1] == 128);
  REQUIRE(hi[2] == -64);
  REQUIRE(hi[3] == 63);
  REQUIRE(hi[4] == -63);
  REQUIRE(hi[5] == 77);
  REQUIRE((hi[6] >= 1 && hi[6] <= 64));
  std::vector<unsigned> hu = u.download();
  REQUIRE(hu[0] == 0xffffffffu);
  REQUIRE(hu[1] == 0u);
  REQUIRE(hu[2] == 0u);  // 64 xors of 1
  REQUIRE(hu[3] == 64u);
  REQUIRE(hu[4] == 1000u - 63u);  // 0 wraps to 1000, then 63 decrements
  REQUIRE(ull.download()[0] == 192ull);
  REQUIRE(f.download()[0] == 32.0f);
  REQUIRE(d.download()[0] == 16.0);
  REQUIRE(ll.download()[0] == 63LL << 40);
}

// One counter, updated with atomicAdd_block by the threads of two blocks: the block scope does not
// make the two blocks' updates atomic with each other.
__global__ void block_scope_two_blocks(int* count) { atomicAdd_block(count, 1); }  // @scope-add

TEST_CASE("atomicAdd_block from two blocks on one counter is a race of its own kind", "[atomics][scope][race]") {
  Buf<int> count(1, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { block_scope_two_blocks<<<2, 32>>>(count.get()); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_atomic_scope");
  const std::string at = SITE("@scope-add");
  REQUIRE_THAT(e.message, Catch::Contains("write-after-write between block-scope atomic write at " + at +
                                          " and block-scope atomic write at " + at));
  REQUIRE_THAT(e.message, Catch::Contains("in another block, which a block-scope atomic does not synchronise with."));
  REQUIRE_THAT(e.message, Catch::Contains("atomicAdd_block and the other _block atomics") &&
                              Catch::Contains("Use atomicAdd (or the atomic without _block"));
}

// cuda::atomic_ref and cuda::atomic: the operations, on device and shared memory.
__global__ void atomic_ref_ops(int* i, float* f, unsigned* u, int* out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> ri(i[0]);
  ri.fetch_add(2);
  ri += 1;
  ++ri;
  ri.fetch_sub(1, cuda::std::memory_order_relaxed);
  cuda::atomic_ref<int, cuda::thread_scope_block> mx(i[1]);
  mx.fetch_max(int(threadIdx.x));
  cuda::atomic_ref<int> mn(i[2]);
  mn.fetch_min(-int(threadIdx.x));
  cuda::atomic_ref<float, cuda::thread_scope_device> rf(*f);
  rf.fetch_add(0.5f);
  cuda::std::atomic_ref<unsigned> ru(*u);
  ru.fetch_or(1u << (threadIdx.x % 32));
  __shared__ cuda::atomic<int, cuda::thread_scope_block> s;
  if (threadIdx.x == 0) s.store(0, cuda::std::memory_order_relaxed);
  __syncthreads();
  s.fetch_add(1);
  s++;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    int expected = 128;
    out[0] = s.compare_exchange_strong(expected, 5) ? s.load() : -1;  // 5
    expected = 0;
    out[1] = s.compare_exchange_weak(expected, 9) ? -1 : expected;  // fails, expected becomes 5
    out[2] = s.exchange(11);  // 5
    out[3] = int(s);  // 11
    cuda::std::atomic<int>* none = nullptr;
    out[4] = none == nullptr;
  }
}

TEST_CASE("cuda::atomic_ref, cuda::atomic and cuda::std::atomic_ref: loads, stores, read-modify-writes", "[atomics][libcu]") {
  Buf<int> i(std::vector<int>{0, -1, 0});
  Buf<float> f(1, 0.0f);
  Buf<unsigned> u(1, 0u);
  Buf<int> out(5, 0);
  atomic_ref_ops<<<2, 64>>>(i, f, u, out);
  std::vector<int> hi = i.download();
  REQUIRE(hi[0] == 128 * 3);
  REQUIRE(hi[1] == 63);
  REQUIRE(hi[2] == -63);
  REQUIRE(f.download()[0] == 64.0f);
  REQUIRE(u.download()[0] == 0xffffffffu);
  REQUIRE(out.download() == std::vector<int>{5, 5, 5, 11, 1});
}

// Message passing between blocks with cuda::atomic_ref: the first block to start writes the data,
// then sets the flag with a release store; the other spins with acquire loads, then reads the data.
// With relaxed orders nothing orders the data accesses: a race. Roles come from a ticket: waiting
// by blockIdx for a block that has not started waits for ever (the 'reverse' order).
template <bool Ordered>
__global__ void message_passing(int* data, int* flag, int* out, unsigned* ticket) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  __shared__ unsigned role;
  if (threadIdx.x == 0) role = atomicAdd(ticket, 1u);
  __syncthreads();
  if (role == 0) {
    data[threadIdx.x] = 100 + threadIdx.x;  // @mp-write
    __syncthreads();
    if (threadIdx.x == 0) f.store(1, Ordered ? cuda::std::memory_order_release : cuda::std::memory_order_relaxed);
  } else {
    if (threadIdx.x == 0)
      while (f.load(Ordered ? cuda::std::memory_order_acquire : cuda::std::memory_order_relaxed) == 0) {
      }
    __syncthreads();
    out[threadIdx.x] = data[threadIdx.x];  // @mp-read
  }
}

TEST_CASE("cuda::atomic_ref release/acquire orders blocks, relaxed does not", "[atomics][libcu][race]") {
  Buf<int> data(32, 0), flag(1, 0), out(32, 0);
  Buf<unsigned> ticket(1, 0u);
  message_passing<true><<<2, 32>>>(data, flag, out, ticket);
  std::vector<int> h = out.download();
  for (int t = 0; t < 32; ++t) REQUIRE(h[t] == 100 + t);

  flag.upload({0});
  ticket.upload({0u});
  cudasim::KernelError e = simtest::kernel_error([&] { message_passing<false><<<2, 32>>>(data, flag, out, ticket); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_device");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@mp-write") + " and read at " +
                                          SITE("@mp-read")));
  REQUIRE_THAT(e.message, Catch::Contains("in another block, with no release and acquire between them."));
}

// Stream compaction: each kept element goes to an index taken with atomicAdd. The order of the
// output differs between schedules, legally: a note, not an error.
__global__ void compact(const int* in, int n, int* out, int* count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < n && in[g] % 3 == 0) out[atomicAdd(count, 1)] = in[g];
}

TEST_CASE("stream compaction with out[atomicAdd(&n, 1)] is accepted", "[atomics][order]") {
  const int n = 1000;
  Buf<int> in(simtest::iota(n)), out(n, -1), count(1, 0);
  compact<<<(n + 127) / 128, 128>>>(in, n, out, count);
  const int c = count.download()[0];
  REQUIRE(c == 334);
  std::vector<int> h = out.download();
  std::sort(h.begin(), h.begin() + c);
  for (int k = 0; k < c; ++k) REQUIRE(h[k] == 3 * k);
}

// A float sum kept under a spin lock (atomicCAS to take it, __threadfence() and atomicExch to
// release it): between blocks (one thread per block) and between the threads of one block.
__device__ void locked_add(int* lock, float* sum, float v) {
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  __threadfence();  // acquire: the previous holder's sum is visible
  *sum += v;
  __threadfence();  // release
  atomicExch(lock, 0);
}
__global__ void lock_between_blocks(int* lock, float* sum) {
  if (threadIdx.x == 0) locked_add(lock, sum, 0.1f * float(blockIdx.x + 1));
}
__global__ void lock_within_block(int* lock, float* sum) {
  if (threadIdx.x % 32 == 0) locked_add(lock, sum, 0.1f * float(threadIdx.x / 32 + 1));
}

TEST_CASE("a float sum under a spin lock, between blocks and within a block, is accepted", "[atomics][order]") {
  Buf<int> lock(1, 0);
  Buf<float> sum(1, 0.0f);
  lock_between_blocks<<<8, 32>>>(lock, sum);
  REQUIRE(std::fabs(sum.download()[0] - 3.6f) < 1e-4f);
  sum.upload({0.0f});
  lock_within_block<<<1, 256>>>(lock, sum);
  REQUIRE(std::fabs(sum.download()[0] - 3.6f) < 1e-4f);
}

// cuda::barrier<cuda::thread_scope_block> (libcu++'s <cuda/barrier>) on the simulator: phases,
// split arrive/wait, arrive_and_drop, and its two diagnostics (a phase that can never complete,
// use before init).
#include <cuda/barrier>

#include "sim_test.h"

using simtest::Buf;
using simtest::iota;
using Barrier = cuda::barrier<cuda::thread_scope_block>;

// Reversal over several rounds with arrive_and_wait in place of __syncthreads.
__global__ void reverse_rounds(int* a, int rounds) {
  __shared__ Barrier bar;
  __shared__ int s[128];
  const int t = threadIdx.x, n = blockDim.x;
  if (t == 0) init(&bar, n);
  __syncthreads();
  int v = a[blockIdx.x * n + t];
  for (int r = 0; r < rounds; ++r) {
    s[t] = v;
    bar.arrive_and_wait();
    v = s[n - 1 - t];
    bar.arrive_and_wait();
  }
  a[blockIdx.x * n + t] = v;
}

TEST_CASE("cuda::barrier: arrive_and_wait separates phases like __syncthreads", "[cuda_barrier]") {
  for (int rounds : {1, 2, 5}) {
    CAPTURE(rounds);
    Buf<int> a(iota(3 * 100));
    reverse_rounds<<<3, 100>>>(a, rounds);
    std::vector<int> got = a.download();
    for (int b = 0; b < 3; ++b)
      for (int t = 0; t < 100; ++t) REQUIRE(got[b * 100 + t] == b * 100 + (rounds % 2 ? 99 - t : t));
  }
}

// Split arrive/wait: work between arrive() and wait() that does not touch the shared data.
// Threads past n drop out of the barrier for good and return.
__global__ void split_phase(const int* in, int* out, int n) {
  __shared__ Barrier bar;
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  if (t >= n) {
    bar.arrive_and_drop();
    return;
  }
  s[t] = in[t];
  Barrier::arrival_token tok = bar.arrive();
  int local = t * t;  // independent work while others arrive
  bar.wait(std::move(tok));
  out[t] = s[n - 1 - t] + local;
  bar.arrive_and_wait();  // the dropped threads are no longer expected
}

TEST_CASE("cuda::barrier: split arrive/wait and arrive_and_drop", "[cuda_barrier]") {
  for (int n : {64, 40, 1}) {
    CAPTURE(n);
    Buf<int> in(iota(64)), out(64, -1);
    split_phase<<<1, 64>>>(in, out, n);
    std::vector<int> got = out.download();
    for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t < n ? (n - 1 - t) + t * t : -1));
  }
}

__global__ void barrier_missing_arrival(int* out) {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x + 1);  // @cbar-init  (one arrival too many)
  __syncthreads();
  bar.arrive_and_wait();  // @cbar-wait
  out[threadIdx.x] = 1;
}

__global__ void barrier_not_initialised(int* out) {
  __shared__ Barrier bar;  // shared memory starts as garbage; nobody calls init()
  bar.arrive_and_wait();  // @cbar-noinit
  out[threadIdx.x] = 1;
}

TEST_CASE("cuda::barrier diagnostics: a phase that can never complete, use before init", "[cuda_barrier][diagnostics]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { barrier_missing_arrival<<<1, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "deadlock");
  REQUIRE(std::string(e.diagnosis) == "deadlock");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::Contains("threads 0-31 wait in cuda::barrier::wait() at " + SITE("@cbar-wait")));
  REQUIRE_THAT(e.message, Catch::Contains("initialised at " + SITE("@cbar-init") + " for 33 arrivals") &&
                              Catch::Contains("still misses 1 arrival in phase 0"));

  e = simtest::kernel_error([&] { barrier_not_initialised<<<1, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "barrier");
  REQUIRE(std::string(e.diagnosis) == "cuda_barrier_misuse");
  REQUIRE_THAT(e.message, Catch::Contains(SITE("@cbar-noinit")) && Catch::Contains("never initialised"));
}

// Every diagnostic of the simulator, each with a planted bug, and the correct version of the same
// code passing. Kernel errors arrive as cudasim::KernelError (main.cpp sets ErrorMode::Throw).
// The `// @name` comments mark lines whose file:line a message must name (see simtest::site).
#include "sim_test.h"

using simtest::Buf;
using simtest::iota;
using simtest::kernel_error;

static std::string kind(const cudasim::KernelError& e) { return e.kind; }

// ---- barrier divergence ------------------------------------------------------------------------

__global__ void divergent_barrier(int* a) {
  const int t = threadIdx.x;
  if (blockIdx.x == 1 && t < 16) {
    a[t] = 1;
    __syncthreads();  // @diverge-then
  } else {
    __syncthreads();  // @diverge-else
    a[t] = 2;
  }
}

TEST_CASE("barrier divergence: threads at different __syncthreads calls", "[diagnostics][divergence]") {
  Buf<int> a(48, 0);
  cudasim::KernelError e = kernel_error([&] { divergent_barrier<<<2, 48>>>(a); });
  REQUIRE(kind(e) == "divergence");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("barrier divergence in kernel divergent_barrier (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("block 1: threads wait at different barriers"));
  REQUIRE_THAT(e.message, Catch::Contains("threads 0-15 wait in __syncthreads() at " + SITE("@diverge-then")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 16-47 wait in __syncthreads() at " + SITE("@diverge-else")));
  REQUIRE_THAT(e.message, Catch::Contains("Every thread of a block must reach the same __syncthreads() call"));
}

// Strict barriers: a thread that returns while the others go on to pass a barrier is divergence
// (CUDA leaves it undefined, even though the hardware lets the others go on).
__global__ void barrier_after_partial_exit(int* a) {
  if (threadIdx.x % 3 == 0) {
    a[threadIdx.x] = -1;  // @exit-last-access
    return;
  }
  __syncthreads();  // @exit-barrier
  a[threadIdx.x] = 1;
}
// Threads that returned earlier, and the others at different barriers.
__global__ void exit_then_split(int* a) {
  if (threadIdx.x % 3 == 0) return;
  if (threadIdx.x < 20)
    __syncthreads();  // @exit-barrier-then
  else
    __syncthreads();  // @exit-barrier-else
  a[threadIdx.x] = 1;
}

TEST_CASE("barrier divergence: the message lists the threads that returned", "[diagnostics][divergence]") {
  Buf<int> a(32, 0);
  cudasim::KernelError e = kernel_error([&] { barrier_after_partial_exit<<<1, 32>>>(a); });
  REQUIRE(kind(e) == "divergence");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("barrier divergence in kernel barrier_after_partial_exit (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("block 0: some threads returned while the others went on to pass the barrier at " +
                                          SITE("@exit-barrier") + "."));
  REQUIRE_THAT(e.message, Catch::Contains("threads 1-2, 4-5, 7-8, 10-11, 13-14, 16-17, 19-20, 22-23, 25-26, 28-29, 31 reached "
                                          "the barrier at " + SITE("@exit-barrier") + " (barrier number 1 of the block)"));
  REQUIRE_THAT(e.message, Catch::Contains("threads 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30 returned after passing 0 barriers "
                                          "(last memory access at " + SITE("@exit-last-access") + ")"));

  e = kernel_error([&] { exit_then_split<<<1, 32>>>(a); });
  REQUIRE(kind(e) == "divergence");
  REQUIRE_THAT(e.message, Catch::Contains("threads 1-2, 4-5, 7-8, 10-11, 13-14, 16-17, 19 wait in __syncthreads() at " +
                                          SITE("@exit-barrier-then")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 20, 22-23, 25-26, 28-29, 31 wait in __syncthreads() at " +
                                          SITE("@exit-barrier-else")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30 have returned"));
}

// ---- deadlock: warp collective vs. barrier -----------------------------------------------------

__global__ void shfl_vs_barrier(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffffu, v, 1);  // @deadlock-shfl
  __syncthreads();  // @deadlock-bar
  out[threadIdx.x] = v;
}

TEST_CASE("deadlock: lanes wait in __shfl_down_sync for lanes that wait at __syncthreads", "[diagnostics][deadlock]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { shfl_vs_barrier<<<1, 64>>>(out); });
  // Lanes of one mask split between a warp collective and a block barrier: reported as barrier
  // divergence (kind "divergence"); a pure warp-level wait would be "deadlock".
  REQUIRE(kind(e) == "divergence");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::Contains("block 0 cannot make progress"));
  REQUIRE_THAT(e.message, Catch::Contains("threads 0-15, 32-47 wait in __shfl_down_sync (mask 0xffffffff) at " + SITE("@deadlock-shfl")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 16-31, 48-63 wait in __syncthreads() at " + SITE("@deadlock-bar")));
}

// Lanes 0-15 wait for the whole warp; lanes 16-31 wait in a collective that also names lane 0.
// Neither can complete: a deadlock among warp collectives alone.
__global__ void warp_cycle(int* out) {
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) v = __shfl_sync(0xffffffffu, v, 0);  // @cycle-a
  else v = __shfl_sync(0xffff0001u, v, 0);  // @cycle-b
  out[lane] = v;
}

TEST_CASE("deadlock: warp collectives waiting for each other", "[diagnostics][deadlock]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { warp_cycle<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "deadlock");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("deadlock in kernel warp_cycle (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("threads 0-15 wait in __shfl_sync (mask 0xffffffff) at " + SITE("@cycle-a")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 16-31 wait in __shfl_sync (mask 0xffff0001) at " + SITE("@cycle-b")));
}

// ---- warp misuse -------------------------------------------------------------------------------

__global__ void lane_not_in_mask(int* out) {
  // Lanes 0-15 are meant to shuffle among themselves, but every lane passes the half mask.
  out[threadIdx.x] = __shfl_sync(0x0000ffffu, int(threadIdx.x), 0);  // @not-in-mask
}

__global__ void overlapping_masks(int* out) {
  const unsigned mask = threadIdx.x < 16 ? 0x0000ffffu : 0xffffffffu;
  __syncwarp(mask);  // @overlap
  out[threadIdx.x] = 1;
}

__global__ void different_intrinsics(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x < 8) v = __shfl_xor_sync(0xffffffffu, v, 1);  // @shfl-branch
  else v = __ballot_sync(0xffffffffu, v & 1);  // @ballot-branch
  out[threadIdx.x] = v;
}

__global__ void bad_width(int* out) { out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1, 12); }

TEST_CASE("warp misuse: a lane that is not in its own mask", "[diagnostics][warp]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { lane_not_in_mask<<<1, 64>>>(out); });
  REQUIRE(kind(e) == "warp");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("warp misuse at " ) && Catch::Contains(SITE("@not-in-mask")));
  REQUIRE_THAT(e.message, Catch::Matches("[\\s\\S]*lane ([1-9]|[12][0-9]|3[01]) calls __shfl_sync with mask 0x0000ffff, which does not include lane \\1 itself[\\s\\S]*"));
  REQUIRE_THAT(e.message, Catch::Contains("must be named in its mask"));
}

TEST_CASE("warp misuse: overlapping but different masks", "[diagnostics][warp]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { overlapping_masks<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "warp");
  REQUIRE_THAT(e.message, Catch::Contains(SITE("@overlap")) && Catch::Contains("must all pass the same mask"));
  REQUIRE_THAT(e.message, Catch::Contains("mask 0x0000ffff") && Catch::Contains("mask 0xffffffff"));
}

TEST_CASE("warp misuse: lanes of one mask in different intrinsics", "[diagnostics][warp]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { different_intrinsics<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "warp");
  REQUIRE_THAT(e.message, Catch::Contains("__shfl_xor_sync") && Catch::Contains("__ballot_sync"));
  REQUIRE_THAT(e.message, Catch::Contains(SITE("@shfl-branch")) && Catch::Contains(SITE("@ballot-branch")));
  REQUIRE_THAT(e.message, Catch::Contains("must all call the same intrinsic"));
}

TEST_CASE("warp misuse: a shuffle width that is not a power of two", "[diagnostics][warp]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { bad_width<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "warp");
  REQUIRE_THAT(e.message, Catch::Contains("width 12 of __shfl_down_sync is not a power of two"));
}

// ---- races ---------------------------------------------------------------------------------------

// Kogge-Stone inclusive scan in one block. Buggy: reads and writes shared memory in the same
// barrier interval, so a thread may read a neighbour's already-updated value.
__global__ void scan_no_split(const int* in, int* out, int n) {
  extern __shared__ int s[];
  const int t = threadIdx.x;
  if (t < n) s[t] = in[t];
  __syncthreads();  // @scan-bar0
  for (int off = 1; off < n; off *= 2) {
    if (t >= off && t < n) s[t] += s[t - off];  // @scan-rmw
    __syncthreads();  // @scan-bar1
  }
  if (t < n) out[t] = s[t];
}
// Correct: read into a register, barrier, write, barrier.
__global__ void scan_split(const int* in, int* out, int n) {
  extern __shared__ int s[];
  const int t = threadIdx.x;
  if (t < n) s[t] = in[t];
  __syncthreads();
  for (int off = 1; off < n; off *= 2) {
    int v = 0;
    if (t >= off && t < n) v = s[t - off];
    __syncthreads();
    if (t >= off && t < n) s[t] += v;
    __syncthreads();
  }
  if (t < n) out[t] = s[t];
}

TEST_CASE("race: Kogge-Stone scan without the read/write split", "[diagnostics][race]") {
  const int n = 64;
  Buf<int> in(std::vector<int>(n, 1)), out(n, 0);
  cudasim::KernelError e = kernel_error([&] { scan_no_split<<<1, n, n * sizeof(int)>>>(in.get(), out.get(), n); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::StartsWith("race in kernel scan_no_split (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains(" hazards on shared memory."));
  // The read and the write are one statement, s[t] += s[t - off]: both sites are that line.
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@scan-rmw") + " and read at " +
                                          SITE("@scan-rmw")));
  // Forward order, thread 1 updates s[1] before thread 2 reads it (the extern __shared__ name).
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 1 wrote __shared__ s[1] at " + SITE("@scan-rmw") +
                                          ", then block 0 thread 2 read it at " + SITE("@scan-rmw")));
  REQUIRE_THAT(e.message, Catch::Contains("(between the barrier at " + SITE("@scan-bar0") + " and the barrier at " +
                                          SITE("@scan-bar1") + ")"));

  // The schedule comparison (the second line of defence, checker off) sees it too: forward order,
  // thread 1 runs after thread 0 and sees its update; reverse order gives the right answer.
  {
    simtest::OptionsGuard guard;
    cudasim::options().checks = false;
    e = kernel_error([&] { scan_no_split<<<1, n, n * sizeof(int)>>>(in, out, n); });
    REQUIRE(kind(e) == "race");
    REQUIRE_THAT(e.message, Catch::Contains("in 'forward' order and in 'reverse' order wrote different values"));
    REQUIRE_THAT(e.message, Catch::Matches("[\\s\\S]*buffer #[0-9]+ \\(64 x int, cudaMalloc at [^)]*test_diagnostics\\.cu:[0-9]+\\): [0-9]+ of 64 elements differ[\\s\\S]*"));
    REQUIRE_THAT(e.message, Catch::Matches("[\\s\\S]*\\[[0-9]+\\] forward: -?[0-9]+   reverse: -?[0-9]+\n[\\s\\S]*"));
    REQUIRE_THAT(e.message, Catch::Contains("__syncthreads()"));  // the hint
  }

  scan_split<<<1, n, n * sizeof(int)>>>(in, out, n);
  REQUIRE(out.download() == iota(n, 1));
  scan_split<<<1, 100, 100 * sizeof(int)>>>(in, out, 60);  // n < blockDim, not a power of two
  std::vector<int> got = out.download();
  for (int i = 0; i < 60; ++i) REQUIRE(got[i] == i + 1);
}

// reverse_chunks of test_semantics.cu without its barrier.
__global__ void reverse_no_barrier(const int* in, int* out, int n) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = in[t];  // @rev-write
  out[t] = s[n - 1 - t];  // @rev-read  the bug: no __syncthreads() between the write and the read
}

TEST_CASE("race: reversing through shared memory without __syncthreads", "[diagnostics][race]") {
  Buf<int> in(iota(64)), out(64, 0);
  cudasim::KernelError e = kernel_error([&] { reverse_no_barrier<<<1, 64>>>(in, out, 64); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("64 hazards on shared memory."));
  // Forward order: threads 0-31 read elements that threads 32-63 write later (write-after-read),
  // threads 32-63 read what threads 0-31 wrote (read-after-write).
  REQUIRE_THAT(e.message, Catch::Contains("write-after-read between read at " + SITE("@rev-read") + " and write at " +
                                          SITE("@rev-write") + " [32 hazards]"));
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@rev-write") + " and read at " +
                                          SITE("@rev-read") + " [32 hazards]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 31 read __shared__ s[32] at " + SITE("@rev-read") +
                                          ", then block 0 thread 32 wrote it at " + SITE("@rev-write")));
  REQUIRE_THAT(e.message, Catch::Contains("(between the kernel's start and the block's end)"));
  // Those reads came before any write: reported too, after the hazards.
  REQUIRE_THAT(e.message, Catch::Contains("also: uninitialized read in kernel reverse_no_barrier") &&
                              Catch::Contains("32 reads of shared memory that nothing wrote.") &&
                              Catch::Contains("first: block 0 thread 0 read __shared__ s[63] at " + SITE("@rev-read")));
}

// The 2007 "volatile last warp" reduction: relies on the 32 lanes of a warp executing in lockstep,
// which Volta's independent thread scheduling no longer guarantees.
__global__ void reduce_volatile_warp(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();  // @vol-bar
  if (t < 32) {
    volatile int* vs = s;
    vs[t] += vs[t + 32];  // @vol-first
    vs[t] += vs[t + 16];
    vs[t] += vs[t + 8];
    vs[t] += vs[t + 4];
    vs[t] += vs[t + 2];
    vs[t] += vs[t + 1];  // @vol-last
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
// The modern form: read into a register, __syncwarp, write, __syncwarp.
__global__ void reduce_syncwarp(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) {
    for (int off = 32; off > 0; off /= 2) {
      int v = s[t] + s[t + off];  // t + off < 64: reads stay inside s for every off
      __syncwarp();
      s[t] = v;
      __syncwarp();
    }
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

TEST_CASE("race: the volatile last-warp reduction without __syncwarp", "[diagnostics][race]") {
  const int blocks = 4;
  Buf<int> in(iota(blocks * 64)), out(blocks, 0);
  cudasim::KernelError e = kernel_error([&] { reduce_volatile_warp<<<blocks, 64>>>(in, out); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::StartsWith("race in kernel reduce_volatile_warp (launched at "));
  // Forward order, lane 0 runs all six steps before lane 1 starts: lane 1's first write lands on
  // the element lane 0 read in its last step.
  REQUIRE_THAT(e.message, Catch::Contains("write-after-read between read at " + SITE("@vol-last") + " and write at " +
                                          SITE("@vol-first")));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[1] at " + SITE("@vol-last") +
                                          ", then block 0 thread 1 wrote it at " + SITE("@vol-first")));
  REQUIRE_THAT(e.message, Catch::Contains("(between the barrier at " + SITE("@vol-bar") + " and the block's end)"));
  REQUIRE_THAT(e.message, Catch::Contains("__syncwarp()"));  // the advice for lanes of one warp

  reduce_syncwarp<<<blocks, 64>>>(in, out);
  std::vector<int> got = out.download();
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int i = 0; i < 64; ++i) sum += b * 64 + i;
    REQUIRE(got[b] == sum);
  }
}

// Block b adds to what block b-1 wrote in the same launch: blocks are not ordered.
__global__ void chain_blocks(int* a) {
  const int b = blockIdx.x;
  if (threadIdx.x == 0) a[b] = (b > 0 ? a[b - 1] : 0) + 1;  // @chain
}

TEST_CASE("race: a block reads another block's output in the same launch", "[diagnostics][race]") {
  Buf<int> a(64, 0);
  cudasim::KernelError e = kernel_error([&] { chain_blocks<<<64, 32>>>(a.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("63 hazards on device memory."));
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@chain") + " and read at " +
                                          SITE("@chain") + " [63 hazards]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote a[0] at " + SITE("@chain") +
                                          ", then block 1 thread 0 read it at " + SITE("@chain")));
  REQUIRE_THAT(e.message, Catch::Contains("in another block, with no release and acquire between them."));

  // The schedule comparison sees it too (checker off): blocks in another order give other values.
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  a.upload(std::vector<int>(64, 0));  // (the checked run left a[b] = b + 1, which every order reproduces)
  e = kernel_error([&] { chain_blocks<<<64, 32>>>(a); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("one block reads what another block writes in the same launch"));
  REQUIRE_THAT(e.message, Catch::Contains("(64 x int,"));
}

// Two lanes exchange through shared memory without __syncwarp between the write and the read.
__global__ void warp_exchange_no_sync(int* out) {
  __shared__ int s[32];
  const int t = threadIdx.x;
  s[t] = t * 10;  // @wx-write
  out[t] = s[t ^ 1];  // @wx-read
}

TEST_CASE("race: warp exchange through shared memory without __syncwarp", "[diagnostics][race]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { warp_exchange_no_sync<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[1] at " + SITE("@wx-read") +
                                          ", then block 0 thread 1 wrote it at " + SITE("@wx-write")));
}

// ---- out of bounds ---------------------------------------------------------------------------

__global__ void write_past_end(int* a, int n) {
  (void)n;  // a learner's kernel that ignores its bound
  const int i = threadIdx.x;
  a[i] = i;  // @oob-write  the bug: no `if (i < n)`; threads 5-7 write into the buffer's alignment slack
}
__global__ void write_before_start(int* a) {
  if (threadIdx.x == 0) a[-1] = 7;  // @oob-before
}

TEST_CASE("out-of-bounds write into the alignment slack after a buffer", "[diagnostics][oob]") {
  Buf<int> a(5);  // @oob-alloc
  cudasim::KernelError e = kernel_error([&] { write_past_end<<<1, 8>>>(a.get(), 5); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  // The checker stops the first thread that writes outside: thread 5, at the store.
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write of device memory in kernel write_past_end (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 5, at " + SITE("@oob-write") +
                                          ": a[5] is outside the buffer, which has 5 elements (valid indices 0 to 4)."));
  REQUIRE_THAT(e.message, Catch::Contains("`i < n` before [i]"));

  // The slack is restored after a report: the next correct launch passes.
  Buf<int> b(5);
  e = kernel_error([&] { write_before_start<<<1, 1>>>(b.get()); });
  REQUIRE(kind(e) == "out-of-bounds");
  // (The kernel parameter is not named for a negative index yet: see test_checker.cu.)
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 0, at " + SITE("@oob-before") + ": ") &&
                              Catch::Contains("[-1] is outside the buffer, which has 5 elements"));
  write_past_end<<<1, 5>>>(b, 5);
  REQUIRE(b.download() == iota(5));

  // With the checker off, the canaries in the slack still catch the write when the launch ends.
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  e = kernel_error([&] { write_past_end<<<1, 8>>>(a, 5); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write in kernel write_past_end (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("wrote to element [5] of buffer #") &&
                              Catch::Contains("(5 x int, cudaMalloc at ") &&
                              Catch::Contains(SITE("@oob-alloc") + "), which has 5 elements"));
  REQUIRE_THAT(e.message, Catch::Contains("if (i < n)"));
}

// ---- device memory: one arena, blame, distance, use after free ------------------------------
// Every buffer lives in one reserved arena with an inaccessible gap around it as large as the
// buffer: an index past either end stays in its own buffer's slot, and an address in the arena
// outside every slot is blamed on the nearest buffer, with the distance in bytes.

__global__ void scale_inclusive(const float* a, float* out, int n, int past) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * a[i];
  if (i == n) out[i + past] = 0.0f;  // @arena-past  the bug: the bound lets one thread write past the end
}

__global__ void shift_far_down(const float* a, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* wild = out - 2000000;  // a wrong base: 2000000 floats (8000000 bytes) below `out`
  if (i < n) wild[i] = a[i];    // @arena-wild
}

__global__ void read_through_table(float* const* table, float* out) {
  out[threadIdx.x] = table[0][threadIdx.x];  // @arena-uaf
}

static std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i);
  return v;
}

TEST_CASE("an out-of-bounds write past a buffer is blamed on that buffer, whichever was allocated first",
          "[diagnostics][oob][arena]") {
  for (bool out_first : {false, true}) {
    for (int past : {0, 3000}) {  // out[1000] in the slack; out[4000], 12000 bytes past the end, in the gap
      INFO("out allocated first: " << out_first << ", past: " << past);
      float* a = nullptr;
      float* out = nullptr;
      if (out_first) {
        REQUIRE(cudaMalloc(&out, 1000 * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMalloc(&a, 1000 * sizeof(float)) == cudaSuccess);
      } else {
        REQUIRE(cudaMalloc(&a, 1000 * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMalloc(&out, 1000 * sizeof(float)) == cudaSuccess);
      }
      REQUIRE(cudaMemcpy(a, ramp(1000).data(), 1000 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
      cudasim::KernelError e = kernel_error([&] { scale_inclusive<<<4, 256>>>(a, out, 1000, past); });
      REQUIRE(kind(e) == "out-of-bounds");
      REQUIRE(e.code == 4);
      REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write of device memory in kernel scale_inclusive"));
      REQUIRE_THAT(e.message, Catch::Contains("block 3, thread 232, at " + SITE("@arena-past") + ": out[" +
                                              std::to_string(1000 + past) +
                                              "] is outside the buffer, which has 1000 elements (valid indices 0 to 999)"));
      if (past) REQUIRE_THAT(e.message, Catch::Contains("999): 12000 bytes after its end; out is buffer #"));
      REQUIRE_THAT(e.message, !Catch::Contains("a["));
      cudaFree(a);
      cudaFree(out);
    }
  }
}

TEST_CASE("a wild pointer far below every buffer names the nearest buffer and the distance in bytes",
          "[diagnostics][oob][arena]") {
  Buf<float> a(ramp(1000));
  Buf<float> out(1000);  // @arena-out
  Buf<float> after(1000);
  cudasim::KernelError e = kernel_error([&] { shift_far_down<<<4, 256>>>(a, out, 1000); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write of device memory in kernel shift_far_down"));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 0, at " + SITE("@arena-wild") +
                                          ": out[-2000000] is outside the buffer, which has 1000 elements (valid indices 0 "
                                          "to 999): 8000000 bytes before its start; out is buffer #"));
  REQUIRE_THAT(e.message, Catch::Contains("(1000 x float, cudaMalloc at " + SITE("@arena-out") + ")"));
  // The launch stopped before the store: `a` and `after` are intact.
  REQUIRE(a.download() == ramp(1000));
}

TEST_CASE("a kernel that reads a released buffer is a use after free naming it", "[diagnostics][arena]") {
  float* freed = nullptr;
  REQUIRE(cudaMalloc(&freed, 64 * sizeof(float)) == cudaSuccess);  // @arena-freed
  Buf<float*> table(std::vector<float*>{freed});
  Buf<float> out(64);
  REQUIRE(cudaFree(freed) == cudaSuccess);  // @arena-free  the bug: released before the kernel that reads it
  cudasim::KernelError e = kernel_error([&] { read_through_table<<<1, 64>>>(table, out); });
  REQUIRE(std::string(e.kind) == "error");
  REQUIRE(e.code == 4);
  REQUIRE(std::string(e.diagnosis) == "use_after_free");
  REQUIRE_THAT(e.message, Catch::StartsWith("use after free: read of device memory in kernel read_through_table"));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 0, at " + SITE("@arena-uaf") + ": element [0] of buffer #"));
  REQUIRE_THAT(e.message, Catch::Contains("(64 x float, cudaMalloc at " + SITE("@arena-freed") +
                                          "), which cudaFree released at " + SITE("@arena-free") + "."));
}

TEST_CASE("offsets into a buffer from an untyped cudaMalloc are counted in bytes", "[diagnostics][oob][arena]") {
  int* a = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&a), 5 * sizeof(int)) == cudaSuccess);  // the element type is not known
  cudasim::KernelError e = kernel_error([&] { write_past_end<<<1, 8>>>(a, 5); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains(SITE("@oob-write") + ": byte 20 of a is outside the buffer, which has 20 bytes "
                                          "(valid offsets 0 to 19;"));
  cudaFree(a);
}

// Off by one in a __shared__ array: thread 31 writes s[32]. The memory checker stops the write.
// Without it: s is not the first array, so the write lands in the canary gap below `flags` and is
// found when the block ends; past the first array the access would hit an inaccessible page at
// once, see tests/sim/fatal/shared_read_past.cu.
__global__ void static_shared_off_by_one(int* out) {
  __shared__ int flags[4];
  __shared__ int s[32];  // @static-oob
  if (threadIdx.x < 4) flags[threadIdx.x] = 0;
  s[threadIdx.x + 1] = int(threadIdx.x);  // @static-oob-write  the bug
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x] + flags[threadIdx.x % 4];
}
__global__ void static_shared_before_start(int* out) {
  __shared__ int s[32];
  s[int(threadIdx.x) - 1] = 1;  // @static-before  thread 0 writes s[-1]
  __syncthreads();
  out[threadIdx.x] = 0;
}

TEST_CASE("out-of-bounds write to a __shared__ array", "[diagnostics][oob]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { static_shared_off_by_one<<<2, 32>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write of shared memory in kernel static_shared_off_by_one"));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 31, at " + SITE("@static-oob-write") +
                                          ": s[32] is outside __shared__ s, which has 32 elements (valid indices 0 to 31)."));
  e = kernel_error([&] { static_shared_before_start<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 0, at " + SITE("@static-before") +
                                          ": s[-1] is outside __shared__ s, which has 32 elements"));

  // With the checker off, the canaries between the arrays catch both when the block ends.
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  e = kernel_error([&] { static_shared_off_by_one<<<2, 32>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write to shared memory in kernel static_shared_off_by_one"));
  REQUIRE_THAT(e.message, Catch::Contains("past the end of __shared__ s (128 bytes, declared at " + SITE("@static-oob") + ")"));
  e = kernel_error([&] { static_shared_before_start<<<1, 32>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains("before the start of __shared__ s"));
}

// Dynamic shared memory sized for 30 ints, used by 32 threads: threads 30 and 31 write into the
// alignment slack after it (the checker stops the first; without it, found when the block ends).
__global__ void dyn_shared_past_end(int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = int(threadIdx.x);  // @dyn-oob
  __syncthreads();
  out[blockIdx.x * 32 + threadIdx.x] = s[0];
}

TEST_CASE("out-of-bounds write past the dynamic shared memory a launch asked for", "[diagnostics][oob]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { dyn_shared_past_end<<<2, 32, 30 * sizeof(int)>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write of shared memory in kernel dyn_shared_past_end"));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 30, at " + SITE("@dyn-oob") +
                                          ": s[30] is outside the 120 bytes of dynamic shared memory that the launch asked "
                                          "for (30 elements, valid indices 0 to 29; the third <<<>>> argument sets the size)."));
  dyn_shared_past_end<<<2, 32, 32 * sizeof(int)>>>(out);  // sized right
  REQUIRE(out.download() == std::vector<int>(64, 0));

  // With the checker off, the canaries after it catch the write when the block ends.
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  e = kernel_error([&] { dyn_shared_past_end<<<2, 32, 30 * sizeof(int)>>>(out); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds write to shared memory in kernel dyn_shared_past_end"));
  REQUIRE_THAT(e.message, Catch::Contains("wrote at byte 120 of dynamic shared memory, but the launch asked for 120 bytes"));
  REQUIRE_THAT(e.message, Catch::Contains("third <<<>>> argument"));
}

// ---- which schedule found it -------------------------------------------------------------------

__global__ void diverge_only_in_reverse(int* flag) {
  // Forward order: thread 0 runs first and sets the flag, everyone takes the same branch.
  // Reverse order: thread 31 runs first and finds the flag clear. The divergence (a barrier in
  // a branch that depends on another thread's write) only shows in one order.
  if (threadIdx.x == 0) *flag = 1;  // @flag-write
  if (*flag) {  // @flag-read
    __syncthreads();
  } else {
    __syncthreads();
  }
}

TEST_CASE("an error found under one schedule names that schedule", "[diagnostics][schedule]") {
  Buf<int> flag(1, 0);
  // The checker sees the cause in the first schedule: thread 0's write and the other threads'
  // read of the flag are not ordered.
  cudasim::KernelError e = kernel_error([&] { diverge_only_in_reverse<<<1, 32>>>(flag.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote flag[0] at " + SITE("@flag-write") +
                                          ", then block 0 thread 1 read it at " + SITE("@flag-read")));
  // The schedule comparison alone (checker off) finds the divergence in the 'reverse' run.
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  REQUIRE(cudaMemset(flag, 0, sizeof(int)) == cudaSuccess);
  e = kernel_error([&] { diverge_only_in_reverse<<<1, 32>>>(flag); });
  REQUIRE(kind(e) == "divergence");
  REQUIRE_THAT(e.message, Catch::Contains("(found while running the 'reverse' thread schedule)"));
}

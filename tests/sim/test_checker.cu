// The memory checker (harness/sim/src/access.cpp, hazards.cpp, findings.cpp): every load, store and atomic of device code is
// seen in the first thread schedule of a launch, on one worker. Each planted bug is checked for
// the report's kind, the array and index it names and both lines it names; each correct version
// of the same code passes. The `// @name` comments mark the lines a report must name.
#include <cuda/barrier>

#include "sim_test.h"

using simtest::Buf;
using simtest::iota;
using simtest::kernel_error;
using simtest::OptionsGuard;
using Barrier = cuda::barrier<cuda::thread_scope_block>;

static std::string kind(const cudasim::KernelError& e) { return e.kind; }
static std::string launched(const char* marker) { return "(launched at " + SITE(marker) + ")"; }

// ---- 1. hazards on shared memory ---------------------------------------------------------------

// Kogge-Stone inclusive scan without the read/write split: in one barrier interval a thread reads
// s[t - off] that thread t - off has already updated in the same step.
__global__ void ks_scan_unsplit(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();  // @ks-bar0
  for (int off = 1; off < 64; off *= 2) {
    if (t >= off) {
      int left = s[t - off];  // @ks-read
      s[t] += left;  // @ks-write
    }
    __syncthreads();  // @ks-bar1
  }
  out[t] = s[t];
}
__global__ void ks_scan_split(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int off = 1; off < 64; off *= 2) {
    int left = t >= off ? s[t - off] : 0;
    __syncthreads();
    s[t] += left;
    __syncthreads();
  }
  out[t] = s[t];
}

TEST_CASE("checker: read-after-write hazard (Kogge-Stone scan without the read/write split)", "[checker][race]") {
  Buf<int> in(std::vector<int>(64, 1)), out(64, 0);
  cudasim::KernelError e = kernel_error([&] { ks_scan_unsplit<<<1, 64>>>(in.get(), out.get()); });  // @ks-launch
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::StartsWith("race in kernel ks_scan_unsplit " + launched("@ks-launch") + ": "));
  REQUIRE_THAT(e.message, Catch::Contains(" hazards on shared memory.\n"));
  REQUIRE_THAT(e.message, Catch::Contains("  read-after-write between write at " + SITE("@ks-write") + " and read at " +
                                          SITE("@ks-read") + " ["));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 1 wrote __shared__ s[1] at " + SITE("@ks-write") +
                                          ", then block 0 thread 2 read it at " + SITE("@ks-read")));
  REQUIRE_THAT(e.message, Catch::Contains("with no barrier between them (between the barrier at " + SITE("@ks-bar0") +
                                          " and the barrier at " + SITE("@ks-bar1") + ")."));

  ks_scan_split<<<1, 64>>>(in.get(), out.get());
  REQUIRE(out.download() == iota(64, 1));
}

// Every thread takes the value 32 places to its right and overwrites its own element in the same
// interval: thread t + 32 (in the other warp) overwrites what thread t still had to read.
__global__ void shift_war(int* out) {
  __shared__ int buf[64];
  const int t = threadIdx.x;
  buf[t] = t;
  __syncthreads();  // @war-bar0
  int right = t + 32 < 64 ? buf[t + 32] : -1;  // @war-read
  buf[t] = right;  // @war-write
  __syncthreads();  // @war-bar1
  out[t] = buf[t];
}
__global__ void shift_war_fixed(int* out) {
  __shared__ int buf[64];
  const int t = threadIdx.x;
  buf[t] = t;
  __syncthreads();
  int right = t + 32 < 64 ? buf[t + 32] : -1;
  __syncthreads();
  buf[t] = right;
  __syncthreads();
  out[t] = buf[t];
}

TEST_CASE("checker: write-after-read hazard on shared memory", "[checker][race]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { shift_war<<<1, 64>>>(out.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::StartsWith("race in kernel shift_war (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("32 hazards on shared memory."));
  REQUIRE_THAT(e.message, Catch::Contains("  write-after-read between read at " + SITE("@war-read") + " and write at " +
                                          SITE("@war-write") + " [32 hazards]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ buf[32] at " + SITE("@war-read") +
                                          ", then block 0 thread 32 wrote it at " + SITE("@war-write")));
  REQUIRE_THAT(e.message, Catch::Contains("(between the barrier at " + SITE("@war-bar0") + " and the barrier at " +
                                          SITE("@war-bar1") + ")"));
  REQUIRE_THAT(e.message, Catch::Contains("read into a register, __syncthreads(), then write"));

  shift_war_fixed<<<1, 64>>>(out.get());
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t < 32 ? t + 32 : -1));
}

// 64 threads, 32 elements: threads t and t + 32 write the same element in one interval.
__global__ void modulo_write(int* out) {
  __shared__ int buf[32];
  const int t = threadIdx.x;
  buf[t % 32] = t;  // @waw-write
  __syncthreads();
  out[t] = buf[t % 32];
}
// Two different lines write one flag.
__global__ void two_writers(int* out) {
  __shared__ int flag;
  const int t = threadIdx.x;
  if (t == 3) flag = 1;  // @waw-a
  if (t == 7) flag = 2;  // @waw-b
  __syncthreads();
  out[t] = flag;
}

TEST_CASE("checker: write-after-write hazard on shared memory", "[checker][race]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { modulo_write<<<1, 64>>>(out.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("32 hazards on shared memory."));
  REQUIRE_THAT(e.message, Catch::Contains("  write-after-write between write at " + SITE("@waw-write") + " and write at " +
                                          SITE("@waw-write") + " [32 hazards]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote __shared__ buf[0] at " + SITE("@waw-write") +
                                          ", then block 0 thread 32 wrote it at " + SITE("@waw-write")));

  e = kernel_error([&] { two_writers<<<1, 32>>>(out.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("1 hazard on shared memory."));
  REQUIRE_THAT(e.message, Catch::Contains("  write-after-write between write at " + SITE("@waw-a") + " and write at " +
                                          SITE("@waw-b") + " [1 hazard]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 3 wrote __shared__ flag[0] at " + SITE("@waw-a") +
                                          ", then block 0 thread 7 wrote it at " + SITE("@waw-b")));
}

// ---- 2. hazards within a warp ------------------------------------------------------------------

__global__ void warp_swap(int* out, int sync) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t * 10;  // @ws-write
  if (sync) __syncwarp();
  out[t] = s[t ^ 1];  // @ws-read
}
__global__ void warp_swap_shfl(int* out) {
  const int t = threadIdx.x;
  int v = t * 10;
  out[t] = __shfl_down_sync(0xffffffffu, v, 1);  // lane 31 gets its own value
}
// __syncwarp orders the lanes of one warp only: exchanging with the other warp needs __syncthreads.
__global__ void cross_warp_swap(int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;  // @xw-write
  __syncwarp();
  out[t] = s[t ^ 32];  // @xw-read
}

TEST_CASE("checker: hazards between lanes of one warp, and __syncwarp", "[checker][race][warp]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { warp_swap<<<1, 64>>>(out.get(), 0); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("  write-after-read between read at " + SITE("@ws-read") + " and write at " +
                                          SITE("@ws-write") + " ["));
  REQUIRE_THAT(e.message, Catch::Contains("  read-after-write between write at " + SITE("@ws-write") + " and read at " +
                                          SITE("@ws-read") + " ["));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[1] at " + SITE("@ws-read") +
                                          ", then block 0 thread 1 wrote it at " + SITE("@ws-write")));
  REQUIRE_THAT(e.message, Catch::Contains("__syncwarp()"));  // the advice for lanes of one warp

  warp_swap<<<1, 64>>>(out.get(), 1);
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t ^ 1) * 10);

  warp_swap_shfl<<<1, 64>>>(out.get());
  got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t % 32 == 31 ? t : t + 1) * 10);

  e = kernel_error([&] { cross_warp_swap<<<1, 64>>>(out.get()); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("between read at " + SITE("@xw-read") + " and write at " + SITE("@xw-write")));
  REQUIRE_THAT(e.message, !Catch::Contains("__syncwarp()"));  // not a hazard within one warp
}

// ---- 3. cuda::barrier phases -------------------------------------------------------------------

// A thread's accesses after arrive() belong to the next phase: writing the element the others
// read after wait() is a hazard.
__global__ void cbar_exchange(int* out, int good) {
  __shared__ Barrier bar;
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  Barrier::arrival_token tok;
  if (good) {
    s[t] = t;
    tok = bar.arrive();
  } else {
    tok = bar.arrive();
    s[t] = t;  // @cb-write
  }
  bar.wait(std::move(tok));
  out[t] = s[63 - t];  // @cb-read
}

TEST_CASE("checker: cuda::barrier: a write after arrive() is a hazard", "[checker][race][cuda_barrier]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { cbar_exchange<<<1, 64>>>(out.get(), 0); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("  read-after-write between write at " + SITE("@cb-write") + " and read at " +
                                          SITE("@cb-read") + " ["));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote __shared__ s[0] at " + SITE("@cb-write") +
                                          ", then block 0 thread 63 read it at " + SITE("@cb-read")));
  REQUIRE_THAT(e.message, Catch::Contains("write your element before arrive()"));

  cbar_exchange<<<1, 64>>>(out.get(), 1);
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == 63 - t);
}

// ---- 4. device memory across blocks -------------------------------------------------------------

// The last block to take a ticket adds up the partial sums of all blocks (the threadFenceReduction
// sample). The writer's __threadfence() before the atomic publishes partial[b]; the last block's
// __threadfence() after the atomic makes the other blocks' partials visible to it.
__global__ void last_block_sum(const int* in, int* partial, unsigned* ticket, int* total, int writer_fence, int reader_fence) {
  __shared__ bool is_last;
  const int b = blockIdx.x;
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += in[b * 32 + i];
    partial[b] = s;  // @tk-write
    if (writer_fence) __threadfence();
    unsigned k = atomicAdd(ticket, 1u);
    is_last = k == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last && threadIdx.x == 0) {
    if (reader_fence) __threadfence();
    int s = 0;
    for (int i = 0; i < int(gridDim.x); ++i) s += partial[i];  // @tk-read
    *total = s;
  }
}

TEST_CASE("checker: device memory across blocks: the last-block ticket needs __threadfence", "[checker][race][device]") {
  const int blocks = 8;
  Buf<int> in(iota(blocks * 32)), partial(blocks, 0), total(1, 0);
  Buf<unsigned> ticket(1, 0u);
  // One launch site (see the second-launch-site case above).
  auto run = [&](int writer_fence, int reader_fence) {
    ticket.upload({0u});
    last_block_sum<<<blocks, 32>>>(in.get(), partial.get(), ticket.get(), total.get(), writer_fence, reader_fence);
  };
  run(1, 1);
  REQUIRE(total.download()[0] == blocks * 32 * (blocks * 32 - 1) / 2);
  REQUIRE(ticket.download()[0] == unsigned(blocks));  // (device memory is restored between schedules)

  cudasim::KernelError e = kernel_error([&] { run(0, 1); });
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains(" hazards on device memory.") || Catch::Contains(" hazard on device memory."));
  REQUIRE_THAT(e.message, Catch::Contains("  read-after-write between write at " + SITE("@tk-write") + " and read at " +
                                          SITE("@tk-read") + " ["));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote partial[0] at " + SITE("@tk-write") + ", then block " +
                                          std::to_string(blocks - 1) + " thread 0 read it at " + SITE("@tk-read")));
  REQUIRE_THAT(e.message, Catch::Contains("in another block, with no release and acquire between them."));
  REQUIRE_THAT(e.message, Catch::Contains("calls __threadfence() before the atomic that announces its data"));

  // The reader's fence is half of the pair: without it the last block has not acquired what the
  // others released. (NVIDIA's threadFenceReduction sample leaves it out; the PTX memory model
  // needs it: an acquire pattern is the atomic that observed the ticket, then a fence.)
  e = kernel_error([&] { run(1, 0); });
  REQUIRE(kind(e) == "race");
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote partial[0] at " + SITE("@tk-write") + ", then block " +
                                          std::to_string(blocks - 1) + " thread 0 read it at " + SITE("@tk-read")));
}

// ---- 5. a read-modify-write of one element from many threads --------------------------------

// Every thread stores its own value into one element (no read): not an accumulator, so the advice
// is one writer, not atomicAdd.
__global__ void store_same(int* out) {
  out[blockIdx.x] = int(threadIdx.x);  // @store-same
}

TEST_CASE("checker: every thread storing into one element is told to let one thread store it", "[checker][race][device]") {
  Buf<int> out(2, 0);
  cudasim::KernelError e = kernel_error([&] { store_same<<<2, 64>>>(out.get()); });
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("write-after-write between write at " + SITE("@store-same") + " and write at " +
                                          SITE("@store-same")));
  REQUIRE_THAT(e.message, Catch::Contains("Every thread stores to the same element, so the last store wins"));
  REQUIRE_THAT(e.message, Catch::Contains("if (threadIdx.x == 0) out[blockIdx.x] = ...;"));
  REQUIRE_THAT(e.message, !Catch::Contains("use atomicAdd"));
}

__global__ void plus_equals(int* out, int x) {
  *out += x;  // @pe
}

TEST_CASE("checker: `*out += x` from many threads: the report does not depend on the workers", "[checker][race][device]") {
  Buf<int> out(1, 0);
  auto launch = [&] { return kernel_error([&] { plus_equals<<<4, 64>>>(out.get(), 1); }); };
  cudasim::KernelError e = launch();
  REQUIRE(kind(e) == "race");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains(" hazards on device memory."));
  REQUIRE_THAT(e.message, Catch::Contains("  read-after-write between write at " + SITE("@pe") + " and read at " + SITE("@pe")));
  // Within block 0 first (blocks run one after another on one worker in the checked schedule).
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote out[0] at " + SITE("@pe") +
                                          ", then block 0 thread 1 read it at " + SITE("@pe")));
  REQUIRE_THAT(e.message, Catch::Contains("use atomicAdd"));
  REQUIRE_THAT(e.message, Catch::Contains("510 hazards on device memory."));
  // The checked schedule runs on one worker whatever options().workers says (4 in this binary):
  // the same launch gives the same report, count included. (tests/CMakeLists.txt runs the same
  // kernel as a program under CUDASIM_WORKERS=1 and 8.)
  const std::string first = e.message;
  for (int i = 0; i < 3; ++i) REQUIRE(std::string(launch().message) == first);
}

// A small kernel that GCC inlines into the launch wrapper, launched from a second site with the
// same argument types: GCC's identical code folding would merge the two wrappers and lose the
// inlined frame's line; CUDASIM_INSTRUMENT_FLAGS turns it off (-fno-ipa-icf).
TEST_CASE("checker: a kernel launched from a second site is reported at its own line", "[checker][race]") {
  Buf<int> out(1, 0);
  cudasim::KernelError e = kernel_error([&] { plus_equals<<<4, 64>>>(out.get(), 1); });
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote out[0] at " + SITE("@pe")));
  e = kernel_error([&] { plus_equals<<<4, 64>>>(out.get(), 2); });
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 wrote out[0] at " + SITE("@pe")));
}

// ---- 6. uninitialized reads ---------------------------------------------------------------------

__global__ void reverse_tile(int* out) {
  __shared__ int tile[32];
  const int t = threadIdx.x;
  if (t < 31) tile[t] = t;  // tile[31] is never written
  __syncthreads();  // @un-bar
  out[t] = tile[31 - t];  // @un-read
}

__global__ void copy_n(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];  // @un-dev-read
}
__global__ void fill_n(int* a, int n, int v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

TEST_CASE("checker: uninitialized reads of shared and device memory", "[checker][uninitialized]") {
  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { reverse_tile<<<1, 32>>>(out.get()); });  // @un-launch
  REQUIRE(kind(e) == "uninitialized");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("uninitialized read in kernel reverse_tile " + launched("@un-launch") +
                                            ": 1 read of shared memory that nothing wrote.\n"));
  REQUIRE_THAT(e.message, Catch::Contains("  read at " + SITE("@un-read") + " [1 time]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ tile[31] at " + SITE("@un-read") +
                                          " (between the barrier at " + SITE("@un-bar") +
                                          " and the block's end), before any thread of the block wrote it."));

  // cudaMalloc without a copy: the kernel reads garbage.
  const int n = 8;
  Buf<int> in(n), dst(n, 0);  // @un-alloc
  e = kernel_error([&] { copy_n<<<1, 32>>>(in.get(), dst.get(), n); });
  REQUIRE(kind(e) == "uninitialized");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("uninitialized read in kernel copy_n (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains(": 8 reads of device memory that nothing wrote."));
  REQUIRE_THAT(e.message, Catch::Contains("  read at " + SITE("@un-dev-read") + " [8 times]"));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read in[0] at " + SITE("@un-dev-read")));
  REQUIRE_THAT(e.message, Catch::Contains("before any thread or cudaMemcpy/cudaMemset wrote it."));

  // Half of it set: the first unset element is named.
  REQUIRE(cudaMemset(in.get(), 0, n / 2 * sizeof(int)) == cudaSuccess);
  e = kernel_error([&] { copy_n<<<1, 32>>>(in.get(), dst.get(), n); });
  REQUIRE(kind(e) == "uninitialized");
  REQUIRE_THAT(e.message, Catch::Contains(": 4 reads of device memory") && Catch::Contains("thread 4 read in[4] at "));

  // All of it set by cudaMemset: no report.
  REQUIRE(cudaMemset(in.get(), 0, n * sizeof(int)) == cudaSuccess);
  copy_n<<<1, 32>>>(in.get(), dst.get(), n);
  REQUIRE(dst.download() == std::vector<int>(n, 0));

  // Written by an earlier kernel: no report either.
  Buf<int> fresh(n);
  fill_n<<<1, 32>>>(fresh.get(), n, 7);
  copy_n<<<1, 32>>>(fresh.get(), dst.get(), n);
  REQUIRE(dst.download() == std::vector<int>(n, 7));
}

// ---- 7. out of bounds, on both sides ------------------------------------------------------------

__global__ void left_neighbour(const int* in, int* out) {
  __shared__ int tile[32];
  const int t = threadIdx.x;
  tile[t] = in[t];
  __syncthreads();
  out[t] = tile[t - 1];  // @oob-sh  thread 0 reads tile[-1]
}
__global__ void left_neighbour_dyn(const int* in, int* out) {
  extern __shared__ int row[];
  const int t = threadIdx.x;
  row[t] = in[t];
  __syncthreads();
  out[t] = row[t - 1];  // @oob-dyn
}
__global__ void read_at(const int* in, int* out, int i) {
  out[0] = in[i];  // @oob-dev
}

TEST_CASE("checker: out-of-bounds reads of shared memory, below the start", "[checker][oob]") {
  Buf<int> in(iota(32)), out(32, 0);
  cudasim::KernelError e = kernel_error([&] { left_neighbour<<<1, 32>>>(in.get(), out.get()); });  // @oob-sh-launch
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds read of shared memory in kernel left_neighbour " +
                                            launched("@oob-sh-launch") + ", block 0, thread 0, at " + SITE("@oob-sh") +
                                            ": tile[-1] is outside __shared__ tile, which has 32 elements (valid indices 0 to 31)."));

  e = kernel_error([&] { left_neighbour_dyn<<<1, 32, 32 * sizeof(int)>>>(in.get(), out.get()); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds read of shared memory in kernel left_neighbour_dyn (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("block 0, thread 0, at " + SITE("@oob-dyn") +
                                          ": row[-1] is outside the 128 bytes of dynamic shared memory that the launch asked "
                                          "for (32 elements, valid indices 0 to 31;"));
}

TEST_CASE("checker: out-of-bounds reads of device memory, on both sides", "[checker][oob]") {
  Buf<int> in(iota(5)), out(1, 0);
  // One launch site for the reports (see the second-launch-site case above).
  auto read = [&](const int* p, int i) { return kernel_error([&] { read_at<<<1, 1>>>(p, out.get(), i); }); };  // @oob-dev-launch
  cudasim::KernelError e = read(in.get(), -1);
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("out-of-bounds read of device memory in kernel read_at " +
                                            launched("@oob-dev-launch") + ", block 0, thread 0, at " + SITE("@oob-dev") + ": "));
  REQUIRE_THAT(e.message, Catch::Contains("[-1] is outside the buffer, which has 5 elements (valid indices 0 to 4)."));
  // Index n lands in the allocation's alignment slack: no fault, but still outside the buffer.
  e = read(in.get(), 5);
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains(SITE("@oob-dev") + ": in[5] is outside the buffer, which has 5 elements"));

  Buf<int> one(1, 3);
  e = read(one.get(), 8);
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains("in[8] is outside the buffer, which has 1 element (valid indices 0 to 0)"));

  read_at<<<1, 1>>>(in.get(), out.get(), 4);
  REQUIRE(out.download()[0] == 4);
}

// Below a buffer's start, no parameter points at or below the address: the report names the
// parameter that points into the buffer ("in[-1]"), not the allocation.
TEST_CASE("checker: a negative index names the kernel parameter", "[checker][oob]") {
  Buf<int> in(iota(5)), out(1, 0);
  cudasim::KernelError e = kernel_error([&] { read_at<<<1, 1>>>(in.get(), out.get(), -1); });
  REQUIRE(kind(e) == "out-of-bounds");
  REQUIRE_THAT(e.message, Catch::Contains(": in[-1] is outside the buffer, which has 5 elements"));
}

// ---- 8. strict barriers ------------------------------------------------------------------------

__global__ void early_exit(int* out) {
  if (threadIdx.x >= 4) return;
  __syncthreads();  // @se-bar
  out[threadIdx.x] = 1;
}
__global__ void exit_after_first_barrier(int* out) {
  out[threadIdx.x] = 0;
  __syncthreads();
  if (threadIdx.x >= 4) {
    out[threadIdx.x] = 2;  // @se-last
    return;
  }
  __syncthreads();  // @se-bar2
  out[threadIdx.x] = 1;
}
// Returning after the block's last barrier is fine.
__global__ void exit_after_last_barrier(int* out) {
  out[threadIdx.x] = 0;
  __syncthreads();
  if (threadIdx.x >= 4) return;
  out[threadIdx.x] = 1;
}

TEST_CASE("checker: strict barriers: threads that returned while the others pass a barrier", "[checker][divergence]") {
  Buf<int> out(8, 0);
  cudasim::KernelError e = kernel_error([&] { early_exit<<<1, 8>>>(out.get()); });  // @se-launch
  REQUIRE(kind(e) == "divergence");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("barrier divergence in kernel early_exit " + launched("@se-launch") +
                                            ", block 0: some threads returned while the others went on to pass the barrier at " +
                                            SITE("@se-bar") + "."));
  REQUIRE_THAT(e.message, Catch::Contains("    threads 0-3 reached the barrier at " + SITE("@se-bar") +
                                          " (barrier number 1 of the block)\n"));
  REQUIRE_THAT(e.message, Catch::Contains("    threads 4-7 returned after passing 0 barriers\n"));
  REQUIRE_THAT(e.message, Catch::Contains("Keep the threads alive and guard only their loads and stores."));

  e = kernel_error([&] { exit_after_first_barrier<<<1, 8>>>(out.get()); });
  REQUIRE(kind(e) == "divergence");
  REQUIRE_THAT(e.message, Catch::Contains("    threads 0-3 reached the barrier at " + SITE("@se-bar2") +
                                          " (barrier number 2 of the block)\n"));
  REQUIRE_THAT(e.message, Catch::Contains("    threads 4-7 returned after passing 1 barrier (last memory access at " +
                                          SITE("@se-last") + ")\n"));

  exit_after_last_barrier<<<1, 8>>>(out.get());
  REQUIRE(out.download() == std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0});
}

// ---- 9. a barrier in a loop that never ends ----------------------------------------------------

__global__ void stride_never_grows(int* out, int n) {
  __shared__ int s[32];
  for (int stride = 1; stride < n; stride *= 1) {  // the bug: *= 2 was meant
    s[threadIdx.x] = stride;
    __syncthreads();  // @run-bar
  }
  out[blockIdx.x * 32 + threadIdx.x] = 0;
}
__global__ void n_barriers(int* out, int n) {
  for (int i = 0; i < n; ++i) __syncthreads();  // @n-bar
  out[blockIdx.x * 32 + threadIdx.x] = n;
}

TEST_CASE("checker: a barrier passed without end is a runaway block", "[checker][runaway]") {
  OptionsGuard guard;
  cudasim::options().max_barrier_passes = 50;
  Buf<int> out(64, 0);
  cudasim::KernelError e = kernel_error([&] { stride_never_grows<<<2, 32>>>(out.get(), 32); });  // @run-launch
  REQUIRE(kind(e) == "runaway");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("runaway block in kernel stride_never_grows " + launched("@run-launch") +
                                            ": block 0 passed the barrier at " + SITE("@run-bar") + " 51 times"));
  REQUIRE_THAT(e.message, Catch::Contains("a loop around it never ends") && Catch::Contains("CUDASIM_MAX_BARRIERS"));
  // The limit counts the passes of one barrier by one block: 50 are fine, 51 are not.
  n_barriers<<<2, 32>>>(out.get(), 50);
  REQUIRE(out.download() == std::vector<int>(64, 50));
  e = kernel_error([&] { n_barriers<<<2, 32>>>(out.get(), 51); });
  REQUIRE(kind(e) == "runaway");
  REQUIRE_THAT(e.message, Catch::Contains("block 0 passed the barrier at " + SITE("@n-bar") + " 51 times"));
}

// ---- 10. no false alarms -------------------------------------------------------------------------

// Float atomics in an order the schedule decides: the sums differ between schedules by rounding.
// Only atomics wrote the element, so that is a note on stderr, not a race.
__global__ void float_accumulate(float* sum) { atomicAdd(sum, threadIdx.x == 0 ? 1e8f : 1.0f); }
// The last atomicExch wins, and which one is last depends on the order.
__global__ void last_writer(int* slot) { atomicExch(slot, int(blockIdx.x * blockDim.x + threadIdx.x)); }
// clock()/clock64() count the thread's own work: stored, they are the same in every schedule.
__global__ void store_clocks(long long* out, int* small) {
  const int t = threadIdx.x;
  long long c0 = clock64();
  __syncthreads();
  long long c1 = clock64();
  out[blockIdx.x * blockDim.x + t] = c1 - c0;
  small[blockIdx.x * blockDim.x + t] = int(clock() > 0);
}
// A CAS loop starting from a plain read of a value that other blocks update atomically.
__device__ float atomic_max_float(float* a, float v) {
  int* ai = reinterpret_cast<int*>(a);
  int old = *ai, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(ai, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}
__global__ void cas_max(const float* v, float* mx) { atomic_max_float(mx, v[blockIdx.x * blockDim.x + threadIdx.x]); }
// __activemask() in each side of a branch gives that side's lanes; a shuffle on that mask works.
__global__ void activemask_branch(unsigned* masks, int* vals) {
  const int lane = threadIdx.x;
  unsigned m;
  int v = lane * 10;
  if (lane % 2 == 0) {
    m = __activemask();
    v = __shfl_sync(m, v, 0);  // lane 0's value
  } else {
    m = __activemask();
    v = __shfl_sync(m, v, 1);  // lane 1's value
  }
  masks[lane] = m;
  vals[lane] = v;
}
// The mask of lanes 0-15 taken in divergent code, then used by lanes 0-7 only: lanes 8-15 went on
// to a full-warp shuffle that waits for lanes 0-7.
__global__ void activemask_deadlock(int* out) {
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) {
    unsigned m = __activemask();  // @am-take
    if (lane < 8) __syncwarp(m);  // @am-sync
  }
  v = __shfl_sync(0xffffffffu, v, 0);  // @am-shfl
  out[lane] = v;
}

TEST_CASE("checker: no false alarms: atomics, clocks, CAS loops, __activemask", "[checker][atomics][warp]") {
  Buf<float> sum(1, 0.0f);
  float_accumulate<<<1, 64>>>(sum.get());
  const float s = sum.download()[0];
  REQUIRE(s >= 1e8f);
  REQUIRE(s <= 1e8f + 64.f);

  Buf<int> slot(1, -1);
  last_writer<<<4, 64>>>(slot.get());
  const int w = slot.download()[0];
  REQUIRE(w >= 0);
  REQUIRE(w < 256);

  Buf<long long> clocks(128, 0LL);
  Buf<int> small(128, 0);
  store_clocks<<<2, 64>>>(clocks.get(), small.get());
  std::vector<long long> c = clocks.download();
  REQUIRE(c[0] > 0);
  REQUIRE(c == std::vector<long long>(128, c[0]));
  REQUIRE(small.download() == std::vector<int>(128, 1));

  std::vector<float> h(8 * 64);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float((i * 37) % 501) - 250.f;
  Buf<float> v(h), mx(1, -1e30f);
  cas_max<<<8, 64>>>(v.get(), mx.get());
  REQUIRE(mx.download()[0] == 250.f);

  Buf<unsigned> masks(32, 0u);
  Buf<int> vals(32, -1);
  activemask_branch<<<1, 32>>>(masks.get(), vals.get());
  std::vector<unsigned> m = masks.download();
  std::vector<int> got = vals.download();
  for (int l = 0; l < 32; ++l) {
    CAPTURE(l);
    REQUIRE(m[l] == (l % 2 ? 0xaaaaaaaau : 0x55555555u));
    REQUIRE(got[l] == (l % 2 ? 10 : 0));
  }

  Buf<int> out(32, 0);
  cudasim::KernelError e = kernel_error([&] { activemask_deadlock<<<1, 32>>>(out.get()); });
  REQUIRE(kind(e) == "deadlock");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::Contains("threads 0-7 wait in __syncwarp (mask 0x0000ffff) at " + SITE("@am-sync")));
  REQUIRE_THAT(e.message, Catch::Contains("threads 8-31 wait in __shfl_sync (mask 0xffffffff) at " + SITE("@am-shfl")));
  REQUIRE_THAT(e.message, Catch::Contains("The mask 0x0000ffff of thread 0 came from __activemask() at " + SITE("@am-take") +
                                          ", which returns only the lanes that reached that call together"));
}

// ---- 11. what uninitialized shared memory holds, per schedule -----------------------------------

__global__ void copy_shared_garbage(unsigned* out) {
  __shared__ unsigned s[32];
  out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];  // @garbage-read
}

// The fill goes by the schedule's position in options().schedules: 0xCD bytes in the first run of
// a launch, 0x7F bytes in the second, random bytes in the third. So a result that depends on
// garbage differs between the runs even when the thread order does not matter.
TEST_CASE("checker: uninitialized shared memory is 0xCD in the first schedule, 0x7F in the second", "[checker][shared][schedule]") {
  Buf<unsigned> out(4 * 32, 0u);
  // With the checker on, the read is reported.
  cudasim::KernelError e = kernel_error([&] { copy_shared_garbage<<<4, 32>>>(out.get()); });
  REQUIRE(kind(e) == "uninitialized");
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[0] at " + SITE("@garbage-read")));

  OptionsGuard guard;
  cudasim::options().checks = false;
  SECTION("one schedule: forward") {
    REQUIRE(cudasim::set_schedules("forward"));
    copy_shared_garbage<<<4, 32>>>(out.get());
    REQUIRE(out.download() == std::vector<unsigned>(4 * 32, 0xCDCDCDCDu));
  }
  SECTION("one schedule: reverse (the first run of the launch: 0xCD as well)") {
    REQUIRE(cudasim::set_schedules("reverse"));
    copy_shared_garbage<<<4, 32>>>(out.get());
    REQUIRE(out.download() == std::vector<unsigned>(4 * 32, 0xCDCDCDCDu));
  }
  SECTION("forward, then reverse: 0x7F in the second run, and the comparison reports the difference") {
    REQUIRE(cudasim::set_schedules("forward,reverse"));
    e = kernel_error([&] { copy_shared_garbage<<<4, 32>>>(out.get()); });
    REQUIRE(kind(e) == "race");
    REQUIRE_THAT(e.message, Catch::Contains("(or on what uninitialized memory holds: each order fills it differently)"));
    REQUIRE_THAT(e.message, Catch::Contains("in 'forward' order and in 'reverse' order wrote different values"));
    REQUIRE_THAT(e.message, Catch::Contains("128 of 128 elements differ"));
    REQUIRE_THAT(e.message, Catch::Contains("[0] forward: 3452816845   reverse: 2139062143"));  // 0xCDCDCDCD, 0x7F7F7F7F
  }
  SECTION("reverse, then forward: the same fills, by position") {
    REQUIRE(cudasim::set_schedules("reverse,forward"));
    e = kernel_error([&] { copy_shared_garbage<<<4, 32>>>(out.get()); });
    REQUIRE(kind(e) == "race");
    REQUIRE_THAT(e.message, Catch::Contains("[0] reverse: 3452816845   forward: 2139062143"));
  }
  SECTION("three schedules: the third fills with random bytes") {
    REQUIRE(cudasim::set_schedules("forward,forward,random"));
    e = kernel_error([&] { copy_shared_garbage<<<4, 32>>>(out.get()); });
    REQUIRE(kind(e) == "race");
    // The second run (0x7F) already differs from the first.
    REQUIRE_THAT(e.message, Catch::Contains("[0] forward: 3452816845   forward: 2139062143"));
  }
}

// ---- scopes, mixed accesses, the read-only path, the reader's acquire (issue 19) ---------------

// A release made with __threadfence_block() orders nothing for another block: the first block to
// start writes, fences at block scope and raises the flag; the other waits for the flag, fences,
// reads. Roles come from a ticket: a block that waited by blockIdx for one that has not started
// would wait for ever (the 'reverse' order starts block 1 first).
template <bool DeviceFence>
__global__ void fence_scope_publish(int* data, int* flag, int* out, unsigned* ticket) {
  if (atomicAdd(ticket, 1u) == 0) {
    data[0] = 42;  // @fs-write
    if (DeviceFence) __threadfence();
    else __threadfence_block();  // @fs-fence-block
    atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) {
    }
    __threadfence();
    out[0] = data[0];  // @fs-read
  }
}

TEST_CASE("checker: __threadfence_block() does not publish to another block, __threadfence() does", "[checker][scope]") {
  Buf<int> data(1, 0), flag(1, 0), out(1, 0);
  Buf<unsigned> ticket(1, 0u);
  fence_scope_publish<true><<<2, 1>>>(data, flag, out, ticket);
  REQUIRE(out.download()[0] == 42);
  flag.upload({0});
  ticket.upload({0u});
  cudasim::KernelError e = kernel_error([&] { fence_scope_publish<false><<<2, 1>>>(data, flag, out, ticket); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_device");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@fs-write") + " and read at " +
                                          SITE("@fs-read")));
  REQUIRE_THAT(e.message, Catch::Contains("[0] at " + SITE("@fs-write") + ", then block 1 thread 0 read it at " + SITE("@fs-read")));
  REQUIRE_THAT(e.message, Catch::Contains("in another block, with no release and acquire between them."));
  REQUIRE_THAT(e.message, Catch::Contains("The writer's fence at " + SITE("@fs-fence-block") + " is __threadfence_block()"));
}

// A status word published as two 32-bit atomics (flag half, then value half) and read as one 64-bit
// word: the reader can see one half without the other. Read as a 32-bit volatile word of the same
// bytes as the atomic that wrote it, it is fine (both strong, the same bytes).
template <int How>  // 0: volatile 64-bit read, 1: plain 64-bit read, 2: volatile 32-bit read of the flag
__global__ void split_status(unsigned long long* status, unsigned long long* out) {
  unsigned* halves = reinterpret_cast<unsigned*>(status);
  if (threadIdx.x == 0) {
    atomicExch(&halves[1], 7u);  // @ss-value
    atomicExch(&halves[0], 1u);  // @ss-flag
  } else if (threadIdx.x == 32) {
    if (How == 0) out[0] = *reinterpret_cast<volatile unsigned long long*>(status);  // @ss-vread
    if (How == 1) out[0] = *status;  // @ss-read
    if (How == 2) out[0] = *reinterpret_cast<volatile unsigned*>(&halves[0]) <= 1u;  // 0 or 1, in any order
  }
  __syncthreads();  // (so that no access is a tail call, whose return address is the kernel's caller)
}

TEST_CASE("checker: a 64-bit read of a word written by two 32-bit atomics is a mixed-access race", "[checker][mixed]") {
  Buf<unsigned long long> status(1, 0ull), out(1, 0ull);
  cudasim::KernelError e = kernel_error([&] { split_status<0><<<1, 64>>>(status, out); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_mixed_access");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between atomic write at " + SITE("@ss-value") +
                                          " and volatile read at " + SITE("@ss-vread")));
  REQUIRE_THAT(e.message, Catch::Contains("only when they cover the same bytes") &&
                              Catch::Contains("one 64-bit atomicExch or atomicCAS"));
  status.upload({0ull});
  e = kernel_error([&] { split_status<1><<<1, 64>>>(status, out); });
  REQUIRE(std::string(e.diagnosis) == "race_mixed_access");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between atomic write at " + SITE("@ss-flag") + " and read at " +
                                          SITE("@ss-read")));
  REQUIRE_THAT(e.message, Catch::Contains("A plain load of an element that another thread updates with an atomic"));
  status.upload({0ull});
  split_status<2><<<1, 64>>>(status, out);
  REQUIRE(out.download()[0] == 1ull);
}

// __ldg reads through the read-only cache, which does not see what other blocks write during the
// launch: block 1 reads with __ldg what block 0 wrote (fenced and flagged: no fence helps).
__global__ void ldg_of_written(int* data, int* flag, int* out) {
  if (blockIdx.x == 0) {
    data[threadIdx.x] = threadIdx.x;  // @ldg-write
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(flag, 1);
  } else {
    if (threadIdx.x == 0)
      while (atomicAdd(flag, 0) == 0) {
      }
    __threadfence();
    __syncthreads();
    out[threadIdx.x] = __ldg(&data[threadIdx.x]);  // @ldg-read
  }
}
__global__ void ldg_of_input(const int* in, int* out) { out[threadIdx.x] = __ldg(&in[threadIdx.x]) + __ldg(&in[0]); }

TEST_CASE("checker: __ldg of data another block writes in the launch is a read-only-path race", "[checker][ldg]") {
  Buf<int> data(32, 0), flag(1, 0), out(32, 0);
  cudasim::KernelError e = kernel_error([&] { ldg_of_written<<<2, 32>>>(data, flag, out); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_read_only");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@ldg-write") +
                                          " and read-only-path (__ldg) read at " + SITE("@ldg-read")));
  REQUIRE_THAT(e.message, Catch::Contains("in another block of the same launch (the read-only path is not coherent with it)."));
  REQUIRE_THAT(e.message, Catch::Contains("fences do not make it so") && Catch::Contains("split the work into two kernel launches"));
  // Input that nothing writes during the launch: fine.
  Buf<int> in(iota(32)), o2(32, 0);
  ldg_of_input<<<1, 32>>>(in, o2);
  std::vector<int> h2 = o2.download();
  for (int t = 0; t < 32; ++t) REQUIRE(h2[t] == t);
}

// The last-block ticket with the counter in a __device__ variable: each block stores its partial,
// fences and takes a ticket; the block that draws the last one sums the partials. Without a fence
// after its atomic, the reader has not acquired (PTX); with it, the pattern is correct.
__device__ unsigned g_ticket;
template <bool ReaderFence>
__global__ void ticket_sum(const int* in, int* partials, int* total) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = in[blockIdx.x] * 2;  // @tkd-write
    __threadfence();
    unsigned t = atomicInc(&g_ticket, gridDim.x - 1);
    if (ReaderFence) __threadfence();
    last = t == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partials[b];  // @tkd-read
    *total = s;
  }
}

TEST_CASE("checker: the last-block ticket needs the reader's fence (PTX), also with a __device__ counter", "[checker][ticket]") {
  Buf<int> in(iota(8, 1)), partials(8, 0), total(1, 0);
  ticket_sum<true><<<8, 32>>>(in, partials, total);
  REQUIRE(total.download()[0] == 72);
  cudasim::KernelError e = kernel_error([&] { ticket_sum<false><<<8, 32>>>(in, partials, total); });
  REQUIRE(e.code == 3);
  REQUIRE(std::string(e.diagnosis) == "race_device");
  REQUIRE_THAT(e.message, Catch::Contains("read-after-write between write at " + SITE("@tkd-write") + " and read at " +
                                          SITE("@tkd-read")));
  REQUIRE_THAT(e.message, Catch::Contains("the reader's atomic saw it, but the reader made no acquire"));
  REQUIRE_THAT(e.message, Catch::Contains("more strictly than NVIDIA's threadFenceReduction sample"));
  REQUIRE_THAT(e.message, Catch::Contains("PTX ISA, Memory Consistency Model: an atomic followed by a fence, or an acquire operation"));
  REQUIRE_THAT(e.message, Catch::Contains("Add a __threadfence() after the atomic, in the thread that then reads"));
}

// An uninitialized shared read whose value never reaches device memory: outside the puzzles
// (undefined_values_are_errors false) a warning, and the program goes on; in the puzzles an error.
__global__ void uninit_unused(int* out) {
  __shared__ int s[64];
  (void)*reinterpret_cast<volatile int*>(&s[threadIdx.x]);  // read before any write, value unused
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
}

TEST_CASE("checker: an uninitialized read is a warning when undefined values are not errors", "[checker][uninit]") {
  Buf<int> out(64, -1);
  {
    OptionsGuard g;
    cudasim::options().undefined_values_are_errors = false;
    uninit_unused<<<1, 64>>>(out);
    std::vector<int> h = out.download();
    for (int t = 0; t < 64; ++t) REQUIRE(h[t] == 63 - t);
  }
  cudasim::KernelError e = kernel_error([&] { uninit_unused<<<1, 64>>>(out); });
  REQUIRE(std::string(e.diagnosis) == "uninit_shared");
  REQUIRE(e.code == 4);
}

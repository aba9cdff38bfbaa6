// Execution semantics of the simulator: barriers, early exit, multi-dimensional indexing, template
// kernels, and per-block shared memory (isolation between blocks that run concurrently on
// different workers, garbage at block start).
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "sim_test.h"

using simtest::Buf;
using simtest::iota;

// ---- __syncthreads makes shared-memory writes visible --------------------------------------------

// Each block reverses its chunk of `n` elements through shared memory.
__global__ void reverse_chunks(const int* in, int* out, int n) {
  __shared__ int s[1024];
  const int t = threadIdx.x;
  const int base = blockIdx.x * n;
  if (t < n) s[t] = in[base + t];
  __syncthreads();
  if (t < n) out[base + t] = s[n - 1 - t];
}

TEST_CASE("__syncthreads: reversing through shared memory, any block size", "[semantics][barrier]") {
  // Single warp, partial warp, blockDim not a multiple of 32, many warps, the maximum.
  for (int tpb : {32, 40, 100, 256, 1024}) {
    CAPTURE(tpb);
    const int blocks = 3;
    Buf<int> in(iota(size_t(blocks) * tpb)), out(size_t(blocks) * tpb, -1);
    reverse_chunks<<<blocks, tpb>>>(in, out, tpb);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    std::vector<int> got = out.download();
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < tpb; ++t) REQUIRE(got[b * tpb + t] == b * tpb + (tpb - 1 - t));
  }
}

// Threads past n return before the barrier. The hardware's __syncthreads waits only for threads
// that have not exited, but CUDA calls it undefined behaviour, and the simulator's barriers are
// strict: a thread that returned while the others go on to pass a barrier is barrier divergence.
__global__ void reverse_early_return(const int* in, int* out, int n) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  if (t >= n) return;
  s[t] = in[t];
  __syncthreads();  // @early-bar
  out[t] = s[n - 1 - t];
  __syncthreads();  // a second barrier after the early exits, too
  out[t] += s[t] * 1000;
}
// The same with the threads kept alive and only their loads and stores guarded.
__global__ void reverse_guarded(const int* in, int* out, int n) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  if (t < n) s[t] = in[t];
  __syncthreads();
  if (t < n) out[t] = s[n - 1 - t];
  __syncthreads();
  if (t < n) out[t] += s[t] * 1000;
  if (t >= n) return;  // returning after the last barrier is fine
  out[t] += 0;
}

TEST_CASE("__syncthreads: threads that returned early are barrier divergence, guarded threads pass", "[semantics][barrier]") {
  // 70: the exits start in the middle of warp 2; 64: whole warps 2 and 3 exit; 1: all but one.
  for (int n : {70, 64, 1}) {
    CAPTURE(n);
    Buf<int> in(iota(128)), out(128, -1);
    cudasim::KernelError e = simtest::kernel_error([&] { reverse_early_return<<<1, 128>>>(in, out, n); });
    REQUIRE(std::string(e.kind) == "divergence");
    REQUIRE(std::string(e.diagnosis) == "barrier_divergence");
    REQUIRE(e.code == 4);
    const std::string here = n == 1 ? "thread 0" : "threads 0-" + std::to_string(n - 1);
    REQUIRE_THAT(e.message, Catch::Contains("some threads returned while the others went on to pass the barrier at " +
                                            SITE("@early-bar")));
    REQUIRE_THAT(e.message, Catch::Contains("    " + here + " reached the barrier at " + SITE("@early-bar") +
                                            " (barrier number 1 of the block)"));
    REQUIRE_THAT(e.message, Catch::Contains("    threads " + std::to_string(n) + "-127 returned after passing 0 barriers\n"));

    out.upload(std::vector<int>(128, -1));
    reverse_guarded<<<1, 128>>>(in, out, n);
    std::vector<int> got = out.download();
    for (int t = 0; t < 128; ++t) REQUIRE(got[t] == (t < n ? (n - 1 - t) + t * 1000 : -1));
  }
}

// Threads from `active` on take part in every barrier (returning early would be barrier divergence)
// with the neutral predicate of each reduction: 0 for count and or, 1 for and.
__global__ void barrier_reductions(int* out, int mod, int active) {
  const int t = threadIdx.x;
  const bool on = t < active;
  const int p = (mod > 0 && t % mod == 0) || mod == -1;  // mod == -1: every thread true; 0: none
  int c = __syncthreads_count(on && p);
  int a = __syncthreads_and(!on || p);
  int o = __syncthreads_or(on && p);
  // A second count with a different predicate: each barrier has its own result.
  int c2 = __syncthreads_count(on && t < 10);
  if (!on) return;  // after the last barrier: fine
  out[4 * t + 0] = c;
  out[4 * t + 1] = a;
  out[4 * t + 2] = o;
  out[4 * t + 3] = c2;
}

TEST_CASE("__syncthreads_count/_and/_or", "[semantics][barrier]") {
  struct Case {
    int mod, active, count, all, any, c2;
  };
  // 100 threads; mod 3 -> threads 0, 3, ..., 99: 34 of them.
  for (Case k : {Case{3, 100, 34, 0, 1, 10}, Case{-1, 100, 100, 1, 1, 10}, Case{0, 100, 0, 0, 0, 10},
                 Case{3, 50, 17, 0, 1, 10}, Case{-1, 5, 5, 1, 1, 5}}) {
    CAPTURE(k.mod, k.active);
    Buf<int> out(400, -1);
    barrier_reductions<<<1, 100>>>(out, k.mod, k.active);
    std::vector<int> got = out.download();
    for (int t = 0; t < 100; ++t) {
      CAPTURE(t);
      if (t >= k.active) {
        REQUIRE(got[4 * t] == -1);
        continue;
      }
      REQUIRE(got[4 * t + 0] == k.count);
      REQUIRE(got[4 * t + 1] == k.all);
      REQUIRE(got[4 * t + 2] == k.any);
      REQUIRE(got[4 * t + 3] == k.c2);
    }
  }
}

// ---- 2-D and 3-D blocks and grids -----------------------------------------------------------------

__global__ void coordinates(int* out) {
  const unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
  const unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const unsigned block = (bz * gridDim.y + by) * gridDim.x + bx;
  const unsigned thread = (tz * blockDim.y + ty) * blockDim.x + tx;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  int* o = out + 2 * (block * threads + thread);
  // Every coordinate and extent, packed: tx ty tz bx by bz as decimal digits, then the extents.
  o[0] = int(tx + 10 * ty + 100 * tz + 1000 * bx + 10000 * by + 100000 * bz);
  o[1] = int(blockDim.x + 10 * blockDim.y + 100 * blockDim.z + 1000 * gridDim.x + 10000 * gridDim.y + 100000 * gridDim.z);
}

TEST_CASE("2-D and 3-D blocks and grids: threadIdx, blockIdx, blockDim, gridDim", "[semantics][dims]") {
  for (auto cfg : {std::make_pair(dim3(2, 3, 2), dim3(4, 3, 2)), std::make_pair(dim3(3, 2), dim3(8, 5)),
                   std::make_pair(dim3(1, 1, 3), dim3(1, 7, 1))}) {
    const dim3 g = cfg.first, b = cfg.second;
    CAPTURE(g.x, g.y, g.z, b.x, b.y, b.z);
    const unsigned threads = b.x * b.y * b.z, blocks = g.x * g.y * g.z;
    Buf<int> out(size_t(2) * threads * blocks, -1);
    coordinates<<<g, b>>>(out);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    std::vector<int> got = out.download();
    const int extents = int(b.x + 10 * b.y + 100 * b.z + 1000 * g.x + 10000 * g.y + 100000 * g.z);
    size_t k = 0;
    for (unsigned bz = 0; bz < g.z; ++bz)
      for (unsigned by = 0; by < g.y; ++by)
        for (unsigned bx = 0; bx < g.x; ++bx)
          for (unsigned tz = 0; tz < b.z; ++tz)
            for (unsigned ty = 0; ty < b.y; ++ty)
              for (unsigned tx = 0; tx < b.x; ++tx, k += 2) {
                CAPTURE(bx, by, bz, tx, ty, tz);
                REQUIRE(got[k] == int(tx + 10 * ty + 100 * tz + 1000 * bx + 10000 * by + 100000 * bz));
                REQUIRE(got[k + 1] == extents);
              }
  }
}

// A tiled matrix transpose: a 2-D grid of 2-D blocks, through a shared tile.
constexpr int kTile = 8;
__global__ void transpose(const int* in, int* out, int rows, int cols) {
  __shared__ int tile[kTile][kTile + 1];
  int c = blockIdx.x * kTile + threadIdx.x, r = blockIdx.y * kTile + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
  __syncthreads();
  c = blockIdx.y * kTile + threadIdx.x;  // column of the output = row of the input
  r = blockIdx.x * kTile + threadIdx.y;
  if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][threadIdx.y];
}

TEST_CASE("2-D grid of 2-D blocks: tiled transpose", "[semantics][dims]") {
  const int rows = 21, cols = 34;  // not multiples of the tile
  Buf<int> in(iota(rows * cols)), out(rows * cols, -1);
  transpose<<<dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile), dim3(kTile, kTile)>>>(in, out, rows, cols);
  std::vector<int> got = out.download();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) REQUIRE(got[c * rows + r] == r * cols + c);
}

// ---- template kernels -----------------------------------------------------------------------------

template <unsigned B>
__global__ void block_sum(const int* in, int* out) {
  __shared__ int s[B];
  const unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * B + t];
  __syncthreads();
  for (unsigned stride = B / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

template <class T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

TEST_CASE("template kernels: template <unsigned B> __global__ with __shared__ int s[B]", "[semantics][template]") {
  const int blocks = 6;
  Buf<int> in(iota(blocks * 256, 1));
  Buf<int> out64(blocks, -1), out256(blocks, -1);
  // Two instantiations in one program: each has its own shared array.
  block_sum<64><<<blocks, 64>>>(in, out64);
  block_sum<256><<<blocks, 256>>>(in, out256);
  std::vector<int> g64 = out64.download(), g256 = out256.download();
  for (int b = 0; b < blocks; ++b) {
    long long s64 = 0, s256 = 0;
    for (int i = 0; i < 64; ++i) s64 += b * 64 + i + 1;
    for (int i = 0; i < 256; ++i) s256 += b * 256 + i + 1;
    REQUIRE(g64[b] == s64);
    REQUIRE(g256[b] == s256);
  }

  std::vector<double> x(50), y(50);
  for (int i = 0; i < 50; ++i) x[i] = i, y[i] = 0.5 * i;
  Buf<double> dx(x), dy(y);
  axpy<double><<<2, 32>>>(2.0, dx, dy, 50);
  // nvcc also deduces the template arguments, axpy<<<2, 32>>>(1.0, dx.get(), dy.get(), 50); the
  // simulator needs a function pointer and cannot (its launch takes void (*)(P...)).
  axpy<double><<<2, 32>>>(1.0, dx, dy, 50);
  std::vector<double> gy = dy.download();
  for (int i = 0; i < 50; ++i) REQUIRE(gy[i] == 3.5 * i);
}

// ---- per-block shared memory ----------------------------------------------------------------------

// Worker threads that ran a kernel (host-side bookkeeping, outside device memory, so the thread
// schedules do not see it).
static std::mutex g_workers_mu;
static std::set<std::thread::id> g_workers_seen;
__device__ void note_worker() {
  {
    std::lock_guard<std::mutex> lock(g_workers_mu);
    g_workers_seen.insert(std::this_thread::get_id());
  }
  // Hold the worker a little, so that the other workers surely take blocks of the grid too.
  std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// Every block fills shared memory with its own id, then checks it over several barrier intervals
// while other blocks do the same on other workers. out[block] counts the elements that were not
// this block's.
__global__ void isolation_static(int* out, int rounds) {
  __shared__ int s[128];
  __shared__ int tag;
  const int t = threadIdx.x, b = blockIdx.x;
  if (t == 0) tag = b;
  s[t] = b * 1000 + t;
  __syncthreads();
  int bad = 0;
  for (int r = 1; r <= rounds; ++r) {
    int j = (t + 7 * r) % 128;
    bad += s[j] != b * 1000 + j;
    bad += tag != b;
    __syncthreads();
    s[t] = b * 1000 + t;  // rewrite: a neighbour that shared this array would overwrite it now
    __syncthreads();
  }
  if (t == 0) note_worker();
  atomicAdd(&out[b], bad);
}

__global__ void isolation_dynamic(int* out, int rounds) {
  extern __shared__ int d[];
  const int t = threadIdx.x, b = blockIdx.x, n = blockDim.x;
  d[t] = b * 1000 + t;
  d[n + t] = -b;
  __syncthreads();
  int bad = 0;
  for (int r = 1; r <= rounds; ++r) {
    int j = (t + 5 * r) % n;
    bad += d[j] != b * 1000 + j;
    bad += d[n + j] != -b;
    __syncthreads();
    d[t] = b * 1000 + t;
    __syncthreads();
  }
  if (t == 0) note_worker();
  atomicAdd(&out[b], bad);
}

TEST_CASE("shared memory is private to each block, with blocks running on several workers", "[semantics][shared]") {
  const int blocks = 96;
  g_workers_seen.clear();
  Buf<int> a(blocks, 0), b(blocks, 0);
  // A checked launch runs every schedule on one worker (the verdict must not depend on the core
  // count), so the blocks share workers only with the checks off.
  const bool checks = cudasim::options().checks;
  cudasim::options().checks = false;
  isolation_static<<<blocks, 128>>>(a, 8);
  isolation_dynamic<<<blocks, 96, 2 * 96 * sizeof(int)>>>(b, 8);
  cudasim::options().checks = checks;
  std::vector<int> ga = a.download(), gb = b.download();
  for (int i = 0; i < blocks; ++i) {
    CAPTURE(i);
    REQUIRE(ga[i] == 0);
    REQUIRE(gb[i] == 0);
  }
  // The test means something only if blocks really ran concurrently on different workers.
  const int workers = cudasim::options().workers > 0 ? cudasim::options().workers : int(std::thread::hardware_concurrency());
  if (workers > 1) REQUIRE(g_workers_seen.size() > 1);
}

// Reads shared memory before writing it, then dirties it for the next block on the same worker.
// (The memory checker reports such reads; these tests switch it off to see what they return.)
__global__ void shared_garbage(unsigned* out) {
  __shared__ unsigned s[64];
  __shared__ unsigned char bytes[3];
  __shared__ double x;
  extern __shared__ unsigned dyn[];
  const int t = threadIdx.x;
  unsigned* o = out + blockIdx.x * 4 * 64;
  o[t] = s[t];  // @garbage-static
  o[64 + t] = dyn[t];
  if (t < 3) o[128 + t] = bytes[t];
  if (t == 0) std::memcpy(&o[192], &x, sizeof x);
  __syncthreads();
  s[t] = 1u;
  dyn[t] = 2u;
  if (t < 3) bytes[t] = 3;
  if (t == 0) x = 4.0;
}

TEST_CASE("shared memory (static and dynamic) starts as garbage in every block", "[semantics][shared]") {
  const int blocks = 40;  // more blocks than workers: later blocks reuse a worker's shared memory
  Buf<unsigned> out(blocks * 4 * 64, 0u);
  // The checker names the first read of memory nothing wrote.
  cudasim::KernelError e = simtest::kernel_error([&] { shared_garbage<<<blocks, 64, 64 * sizeof(unsigned)>>>(out); });
  REQUIRE(std::string(e.kind) == "uninitialized");
  REQUIRE(std::string(e.diagnosis) == "uninit_shared");
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[0] at " + SITE("@garbage-static")));

  // Without it, one schedule at a time: every block, on every worker, starts with the fill of
  // that schedule (0xCD bytes in the first; see test_checker.cu for the others).
  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  REQUIRE(cudasim::set_schedules("forward"));
  shared_garbage<<<blocks, 64, 64 * sizeof(unsigned)>>>(out);
  std::vector<unsigned> got = out.download();
  for (int b = 0; b < blocks; ++b) {
    CAPTURE(b);
    const unsigned* o = &got[b * 4 * 64];
    for (int t = 0; t < 64; ++t) {
      CAPTURE(t);
      REQUIRE(o[t] == 0xCDCDCDCDu);
      REQUIRE(o[64 + t] == 0xCDCDCDCDu);
    }
    for (int t = 0; t < 3; ++t) REQUIRE(o[128 + t] == 0xCDu);
    REQUIRE(o[192] == 0xCDCDCDCDu);
    REQUIRE(o[193] == 0xCDCDCDCDu);
  }
}

// The same in a `template <class T>` kernel.
template <class T>
__global__ void shared_garbage_template(T* out) {
  __shared__ T s[32];
  const int t = threadIdx.x;
  out[blockIdx.x * 32 + t] = s[t];  // @garbage-template
  __syncthreads();
  s[t] = T(1);
}

TEST_CASE("shared memory of a template <class T> kernel starts as garbage in every block", "[semantics][shared]") {
  const int blocks = 24;
  Buf<unsigned> out(blocks * 32, 0u);
  cudasim::KernelError e = simtest::kernel_error([&] { shared_garbage_template<unsigned><<<blocks, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "uninitialized");
  REQUIRE_THAT(e.message, Catch::StartsWith("uninitialized read in kernel shared_garbage_template<unsigned> (launched at "));
  REQUIRE_THAT(e.message, Catch::Contains("first: block 0 thread 0 read __shared__ s[0] at " + SITE("@garbage-template")));

  simtest::OptionsGuard guard;
  cudasim::options().checks = false;
  REQUIRE(cudasim::set_schedules("forward"));
  shared_garbage_template<unsigned><<<blocks, 32>>>(out);
  REQUIRE(out.download() == std::vector<unsigned>(blocks * 32, 0xCDCDCDCDu));
}

// A __shared__ array in a template __device__ helper: each instantiation is its own variable
// (the simulator once gave block_sum<64> the 128 bytes of block_sum<32>'s array).
template <int N>
__device__ int block_sum(int v) {
  __shared__ int buf[N];
  if (threadIdx.x < N) buf[threadIdx.x] = 0;  // one writer per element (threadIdx.x % N would be a race)
  __syncthreads();
  atomicAdd(&buf[0], v);
  __syncthreads();
  int r = buf[0];
  __syncthreads();
  return r;
}
__global__ void two_instantiations(int* out) {
  int a = block_sum<32>(1);
  int b = block_sum<64>(2);
  int c = block_sum<32>(3);  // the same variable as the first call: fine to reuse
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + 1000 * b + 1000000 * c;
}

TEST_CASE("__shared__ arrays of different template instantiations are different variables", "[semantics][shared][template]") {
  Buf<int> out(3 * 64, 0);
  two_instantiations<<<3, 64>>>(out);
  REQUIRE(out.download() == std::vector<int>(3 * 64, 64 + 1000 * 128 + 1000000 * 192));
}

// Dynamic shared memory declared as raw bytes and cast to the element type: the usual way to use
// dynamic shared memory in a template kernel (extern __shared__ T s[] would clash between
// instantiations under nvcc).
template <class T>
__global__ void reverse_via_bytes(const T* in, T* out) {
  extern __shared__ unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  T* s2 = (T*)smem;
  const unsigned t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  out[t] = s2[blockDim.x - 1 - t];
}

TEST_CASE("dynamic shared memory: extern __shared__ bytes cast to the element type", "[semantics][shared]") {
  std::vector<double> h(48);
  for (int i = 0; i < 48; ++i) h[i] = i + 0.25;
  Buf<double> in(h), out(48, 0.0);
  reverse_via_bytes<double><<<1, 48, 48 * sizeof(double)>>>(in, out);
  std::vector<double> got = out.download();
  for (int i = 0; i < 48; ++i) REQUIRE(got[i] == 47 - i + 0.25);
}

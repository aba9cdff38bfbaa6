// Warp collectives: shuffles (with CUDA's exact segment rules for width < 32), votes, __syncwarp,
// __reduce_add_sync, disjoint masks used at the same time, partial warps and exited lanes.
#include "sim_test.h"

using simtest::Buf;

enum Op { kIdx, kUp, kDown, kXor };

// Two warps; lane l of warp w holds 1000 * w + l. out[thread] = the shuffled value.
__global__ void shuffle(int* out, int op, int param, int width) {
  const int t = threadIdx.x;
  const int v = 1000 * (t / 32) + t % 32;
  int r = -1;
  switch (op) {
    case kIdx: r = __shfl_sync(0xffffffffu, v, param, width); break;
    case kUp: r = __shfl_up_sync(0xffffffffu, v, unsigned(param), width); break;
    case kDown: r = __shfl_down_sync(0xffffffffu, v, unsigned(param), width); break;
    case kXor: r = __shfl_xor_sync(0xffffffffu, v, param, width); break;
  }
  out[t] = r;
}

// CUDA's documented source lane (CUDA C++ Programming Guide, "Warp Shuffle Functions"), written
// out independently of the simulator. Returns the lane whose value `lane` receives.
static int cuda_source_lane(int op, int lane, int param, int width) {
  const int seg = lane / width * width;  // first lane of the caller's segment
  switch (op) {
    case kIdx: return seg + ((param % width) + width) % width;  // srcLane modulo width, in the segment
    case kUp: return lane - param >= seg ? lane - param : lane;  // below the segment: own value
    case kDown: return lane + param < seg + width ? lane + param : lane;  // past the segment: own value
    case kXor: {
      const int s = lane ^ param;
      return s < seg + width ? s : lane;  // an earlier segment may be read, a later one may not
    }
  }
  return -1;
}

TEST_CASE("warp shuffles: __shfl_sync/_up/_down/_xor with width 32, 16 and 8", "[warp][shfl]") {
  const char* names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"};
  for (int width : {32, 16, 8}) {
    for (int op : {kIdx, kUp, kDown, kXor}) {
      std::vector<int> params = op == kIdx ? std::vector<int>{0, 3, 7, 13, 31, -1} : op == kXor ? std::vector<int>{1, 2, 4, 8, 16, 31}
                                                                                                : std::vector<int>{1, 2, 3, 5, 8, 16};
      for (int param : params) {
        CAPTURE(names[op], width, param);
        Buf<int> out(64, -7);
        shuffle<<<1, 64>>>(out, op, param, width);
        std::vector<int> got = out.download();
        for (int t = 0; t < 64; ++t) {
          CAPTURE(t);
          REQUIRE(got[t] == 1000 * (t / 32) + cuda_source_lane(op, t % 32, param, width));
        }
      }
    }
  }
}

TEST_CASE("warp shuffles: hand-checked lanes", "[warp][shfl]") {
  auto run = [](int op, int param, int width) {
    Buf<int> out(64, -7);
    shuffle<<<1, 64>>>(out, op, param, width);
    return out.download();
  };
  // __shfl_down_sync(.., 4, 16): lanes 12-15 and 28-31 are past their segment and keep their value.
  std::vector<int> d = run(kDown, 4, 16);
  CHECK(d[0] == 4);
  CHECK(d[11] == 15);
  CHECK(d[12] == 12);
  CHECK(d[15] == 15);
  CHECK(d[16] == 20);
  CHECK(d[28] == 28);
  CHECK(d[32 + 3] == 1007);
  // __shfl_up_sync(.., 3, 8): lanes 0-2 of each 8-lane segment keep their value.
  std::vector<int> u = run(kUp, 3, 8);
  CHECK(u[0] == 0);
  CHECK(u[2] == 2);
  CHECK(u[3] == 0);
  CHECK(u[8] == 8);
  CHECK(u[10] == 10);
  CHECK(u[11] == 8);
  CHECK(u[63] == 1028);
  // __shfl_xor_sync(.., 16, 16): lane 0 would read lane 16 (a later segment): own value; lane 16
  // reads lane 0 (an earlier segment), which CUDA allows.
  std::vector<int> x = run(kXor, 16, 16);
  CHECK(x[0] == 0);
  CHECK(x[5] == 5);
  CHECK(x[16] == 0);
  CHECK(x[21] == 5);
  // __shfl_sync(.., 13, 8): srcLane modulo the width, inside the caller's segment.
  std::vector<int> i = run(kIdx, 13, 8);
  CHECK(i[0] == 5);
  CHECK(i[9] == 13);
  CHECK(i[31] == 29);
  CHECK(i[40] == 1013);
}

template <class T>
__global__ void shuffle_types(T* out) {
  const int lane = threadIdx.x;
  T v = T(lane) * T(3) + T(lane % 2 ? -1 : 1) / T(4);
  out[lane] = __shfl_down_sync(0xffffffffu, v, 1) + __shfl_xor_sync(0xffffffffu, v, 2);
}

TEST_CASE("warp shuffles carry float, double and long long", "[warp][shfl]") {
  auto expect = [](int lane) {
    auto v = [](int l) { return double(l) * 3 + (l % 2 ? -0.25 : 0.25); };
    return v(lane + 1 < 32 ? lane + 1 : lane) + v(lane ^ 2);
  };
  Buf<float> f(32, 0.f);
  Buf<double> d(32, 0.0);
  shuffle_types<float><<<1, 32>>>(f);
  shuffle_types<double><<<1, 32>>>(d);
  std::vector<float> gf = f.download();
  std::vector<double> gd = d.download();
  for (int l = 0; l < 32; ++l) {
    REQUIRE(gf[l] == float(expect(l)));
    REQUIRE(gd[l] == expect(l));
  }
  Buf<long long> q(32, 0LL);
  shuffle_types<long long><<<1, 32>>>(q);
  std::vector<long long> gq = q.download();
  for (int l = 0; l < 32; ++l) {
    long long next = l + 1 < 32 ? l + 1 : l, x = l ^ 2;
    REQUIRE(gq[l] == next * 3 + x * 3);  // the /4 term is 0 in integer arithmetic
  }
}

__global__ void votes(unsigned* out, int mod) {
  const int t = threadIdx.x, lane = t % 32;
  const int p = mod == 0 ? 1 : (lane % mod == 0);
  unsigned* o = out + 4 * t;
  o[0] = __ballot_sync(0xffffffffu, p);
  o[1] = __any_sync(0xffffffffu, p);
  o[2] = __all_sync(0xffffffffu, p);
  o[3] = __any_sync(0xffffffffu, 0);
}

TEST_CASE("warp votes: __ballot_sync, __any_sync, __all_sync", "[warp][vote]") {
  for (int mod : {3, 0, 32}) {
    CAPTURE(mod);
    Buf<unsigned> out(4 * 64, 7u);
    votes<<<1, 64>>>(out, mod);
    std::vector<unsigned> got = out.download();
    const unsigned ballot = mod == 3 ? 0x49249249u : mod == 0 ? 0xffffffffu : 0x1u;
    for (int t = 0; t < 64; ++t) {
      CAPTURE(t);
      REQUIRE(got[4 * t + 0] == ballot);
      REQUIRE(got[4 * t + 1] == 1u);
      REQUIRE(got[4 * t + 2] == (mod == 0 ? 1u : 0u));
      REQUIRE(got[4 * t + 3] == 0u);
    }
  }
}

// Lanes exchange through shared memory with __syncwarp between the write and the read.
__global__ void warp_exchange(int* out, int rounds) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  int v = t;
  for (int r = 0; r < rounds; ++r) {
    s[t] = v;
    __syncwarp();
    v = s[(t & ~31) | ((t + 1) & 31)];  // from the next lane of the same warp
    __syncwarp();
  }
  out[t] = v;
}

TEST_CASE("__syncwarp orders shared-memory writes and reads within a warp", "[warp][syncwarp]") {
  Buf<int> out(64, -1);
  warp_exchange<<<1, 64>>>(out, 5);
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t & ~31) + ((t + 5) & 31));
}

__global__ void reduce_add(int* out) {
  const int t = threadIdx.x, lane = t % 32;
  out[3 * t + 0] = __reduce_add_sync(0xffffffffu, lane + 1);
  // Disjoint half-warp masks, each half its own reduction.
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  out[3 * t + 1] = __reduce_add_sync(half, lane);
  out[3 * t + 2] = int(__reduce_add_sync(0xffffffffu, unsigned(lane) * 0x10000001u + 0xf0000000u));  // unsigned, wraps
}

TEST_CASE("__reduce_add_sync: full warp, half-warp masks, unsigned wrap-around", "[warp][reduce]") {
  Buf<int> out(3 * 64, -1);
  reduce_add<<<1, 64>>>(out);
  std::vector<int> got = out.download();
  unsigned wrapped = 0;  // modulo 2^32
  for (unsigned l = 0; l < 32; ++l) wrapped += l * 0x10000001u + 0xf0000000u;
  REQUIRE(wrapped != 0);
  for (int t = 0; t < 64; ++t) {
    CAPTURE(t);
    REQUIRE(got[3 * t + 0] == 528);  // 1 + ... + 32
    REQUIRE(got[3 * t + 1] == (t % 32 < 16 ? 120 : 376));  // 0+..+15, 16+..+31
    REQUIRE(unsigned(got[3 * t + 2]) == wrapped);
  }
}

// The two halves of each warp run different collective sequences at the same time, each with its
// own mask; neither may wait for, or be matched with, the other.
__global__ void half_warps(int* out) {
  const int t = threadIdx.x, lane = t % 32;
  int v = lane + 1;
  if (lane < 16) {
    for (int off = 8; off > 0; off /= 2) v += __shfl_xor_sync(0x0000ffffu, v, off, 16);  // butterfly: all lanes get the sum
    __syncwarp(0x0000ffffu);
    v += __ballot_sync(0x0000ffffu, lane % 2) == 0xaaaau ? 1000 : 0;  // the odd lanes
  } else {
    for (int off = 1; off < 16; off *= 2) {
      int u = __shfl_up_sync(0xffff0000u, v, off, 16);  // inclusive scan of the upper half
      if (lane - 16 >= off) v += u;
    }
    v += __all_sync(0xffff0000u, lane >= 16) ? 2000 : 0;
  }
  out[t] = v;
}

TEST_CASE("disjoint half-warp masks used concurrently", "[warp][mask]") {
  Buf<int> out(64, -1);
  half_warps<<<1, 64>>>(out);
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) {
    CAPTURE(t);
    const int lane = t % 32;
    if (lane < 16) {
      REQUIRE(got[t] == 136 + 1000);  // 1 + ... + 16
    } else {
      int scan = 0;
      for (int l = 16; l <= lane; ++l) scan += l + 1;
      REQUIRE(got[t] == scan + 2000);
    }
  }
}

// blockDim 40: warp 1 has lanes 0-7 only. Full masks name lanes that do not exist; they must not
// be waited for. The tree reduction of warp 1 stays inside its 8 lanes (width 8): with width 32,
// lane 0 would read lanes 16, 8, ... that do not exist and keep garbage as its sum.
__global__ void partial_warp(int* out) {
  const int t = threadIdx.x, lane = t % 32;
  int* o = out + 6 * (blockIdx.x * 40 + t);
  __syncwarp();
  o[0] = int(__ballot_sync(0xffffffffu, 1));
  o[1] = __all_sync(0xffffffffu, 1);
  o[2] = __reduce_add_sync(0xffffffffu, 1);
  unsigned v = unsigned(lane) * 10u;
  const int width = t < 32 ? 32 : 8;
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off, width);
  o[3] = lane == 0 ? int(v) : 0;  // lane 0's sum is all that a tree reduction keeps
  o[4] = __shfl_sync(0xffffffffu, lane, 3);
  o[5] = 0;
}
// The same reduction over all 32 lanes in the partial warp: lane 0 of warp 1 adds in the value of
// lane 16, which does not exist, and stores the garbage sum. The simulator reports the shuffle.
__global__ void partial_warp_full_width(int* out) {
  const int lane = threadIdx.x % 32;
  unsigned v = unsigned(lane) * 10u;
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);  // @partial-shfl
  if (lane == 0) out[threadIdx.x / 32] = int(v);
}

// The puzzles' harness treats an undefined value as an error (the course teaches it); a test that
// expects that report sets the option for its own duration.
struct StrictUndefinedValues {
  bool was = cudasim::options().undefined_values_are_errors;
  StrictUndefinedValues() { cudasim::options().undefined_values_are_errors = true; }
  ~StrictUndefinedValues() { cudasim::options().undefined_values_are_errors = was; }
};
struct LenientUndefinedValues {
  bool was = cudasim::options().undefined_values_are_errors;
  LenientUndefinedValues() { cudasim::options().undefined_values_are_errors = false; }
  ~LenientUndefinedValues() { cudasim::options().undefined_values_are_errors = was; }
};

TEST_CASE("partial last warp (blockDim 40) with full masks", "[warp][partial]") {
  StrictUndefinedValues strict;
  Buf<int> sums(2, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { partial_warp_full_width<<<1, 40>>>(sums.get()); });
  REQUIRE(std::string(e.kind) == "warp");
  REQUIRE(e.code == 4);
  REQUIRE_THAT(e.message, Catch::StartsWith("warp misuse at " + SITE("@partial-shfl") + ": kernel partial_warp_full_width"));
  REQUIRE_THAT(e.message, Catch::Contains("block 0: lane 0 of warp 1 reads lane 16 through __shfl_down_sync, but lane 16 "
                                          "does not exist (the block has fewer threads than the warp has lanes)"));

  Buf<int> out(2 * 6 * 40, -1);
  partial_warp<<<2, 40>>>(out.get());  // both blocks compute the same values
  std::vector<int> got = out.download();
  for (int i = 0; i < 2 * 40; ++i) {
    CAPTURE(i);
    const int t = i % 40;
    const bool w1 = t >= 32;
    const int* o = &got[6 * i];
    REQUIRE(unsigned(o[0]) == (w1 ? 0xffu : 0xffffffffu));
    REQUIRE(o[1] == 1);
    REQUIRE(o[2] == (w1 ? 8 : 32));
    // Warp 0: 10 * (0 + ... + 31); warp 1: 10 * (0 + ... + 7).
    if (t % 32 == 0) REQUIRE(o[3] == (w1 ? 280 : 4960));
    REQUIRE(o[4] == 3);
  }
}

// Lanes that have returned do not block later collectives with a full mask.
__global__ void exited_lanes(unsigned* out, int live) {
  const int lane = threadIdx.x;
  if (lane >= live) return;
  __syncwarp();
  unsigned b = __ballot_sync(0xffffffffu, 1);
  unsigned s = __shfl_sync(0xffffffffu, unsigned(lane) * 2u, live - 1);
  // __activemask() answers with the lanes that reach that call together: every lane that has not
  // exited, here (see test_checker.cu for __activemask() in divergent code).
  unsigned active = __activemask();
  __syncwarp();
  out[lane] = b + (s << 24) + (active == b ? 0u : 0x100u);
}

TEST_CASE("lanes that exited do not block full-mask collectives", "[warp][exit]") {
  for (int live : {20, 1, 31}) {
    CAPTURE(live);
    Buf<unsigned> out(32, 7u);
    exited_lanes<<<1, 32>>>(out, live);
    std::vector<unsigned> got = out.download();
    const unsigned ballot = (1u << live) - 1;
    const unsigned from_last = unsigned(live - 1) * 2u << 24;
    for (int l = 0; l < 32; ++l) REQUIRE(got[l] == (l < live ? ballot + from_last : 7u));
  }
}

// Valid CUDA: lanes 0-15 shuffle among themselves (their own mask) while lanes 16-31 go ahead to
// a full-warp reduction and wait there. Groups with overlapping masks are pending at the same
// time; whichever order the lanes run in, nothing is misuse. (The simulator used to report warp
// misuse here under the 'reverse' schedule.)
__global__ void half_then_full(int* out) {
  const int lane = threadIdx.x % 32;
  int v = lane;
  if (lane < 16) v += __shfl_xor_sync(0x0000ffffu, v, 1);
  if (lane >= 24) v += __ballot_sync(0xff000000u, 1) == 0xff000000u ? 100 : 0;
  v = __reduce_add_sync(0xffffffffu, v);
  if (lane % 2) v += __shfl_down_sync(0xaaaaaaaau, lane, 2);  // the odd lanes only
  out[threadIdx.x] = v;
}

TEST_CASE("overlapping masks at different calls may be pending together", "[warp][mask]") {
  Buf<int> out(64, -1);
  half_then_full<<<1, 64>>>(out);
  std::vector<int> got = out.download();
  // Lanes 0-15 hold l + (l ^ 1); lanes 16-23 hold l; lanes 24-31 hold l + 100.
  int sum = 0;
  for (int l = 0; l < 32; ++l) sum += l < 16 ? l + (l ^ 1) : l < 24 ? l : l + 100;
  for (int t = 0; t < 64; ++t) {
    CAPTURE(t);
    const int lane = t % 32;
    const int odd = lane % 2 ? (lane + 2 < 32 ? lane + 2 : lane) : 0;
    REQUIRE(got[t] == sum + odd);
  }
}

// A shuffle tree over the live lanes of a warp whose other lanes returned: the mask is theirs
// (from __ballot_sync), and a lane adds what it read only if that lane is live. Lanes near the end
// still read returned lanes, which gives them an undefined value that they discard; lane 0's sum
// never depends on it.
__global__ void guarded_tree(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  const unsigned live_mask = __ballot_sync(0xffffffffu, i < n);
  if (i >= n) return;
  const int live = __popc(live_mask);
  int v = in[i];
  for (int off = 16; off > 0; off /= 2) {
    int other = __shfl_down_sync(live_mask, v, off);  // @guarded-shfl
    if (lane + off < live) v += other;
  }
  if (lane == 0) out[i / 32] = v;
}
// The same tree without the guard: lane 0 adds in an undefined value and stores it.
__global__ void unguarded_tree(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  const unsigned live_mask = __ballot_sync(0xffffffffu, i < n);
  if (i >= n) return;
  int v = in[i];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(live_mask, v, off);  // @unguarded-shfl
  if (lane == 0) out[i / 32] = v;
}

TEST_CASE("a shuffle that reads a returned lane and discards the value is not an error outside the puzzles", "[warp][undefined]") {
  const int n = 45;  // warp 1 has 13 live lanes
  Buf<int> in(simtest::iota(n, 1));
  Buf<int> sums(2, -1);
  {
    LenientUndefinedValues lenient;
    guarded_tree<<<1, 64>>>(in.get(), sums.get(), n);
    std::vector<int> got = sums.download();
    REQUIRE(got[0] == 32 * 33 / 2);                // 1 + ... + 32
    REQUIRE(got[1] == 45 * 46 / 2 - 32 * 33 / 2);  // 33 + ... + 45
  }
  {
    // With the puzzles' setting the same read is warp misuse, at the shuffle's line.
    StrictUndefinedValues strict;
    cudasim::KernelError e = simtest::kernel_error([&] { guarded_tree<<<1, 64>>>(in.get(), sums.get(), n); });
    REQUIRE(std::string(e.kind) == "warp");
    REQUIRE_THAT(e.message, Catch::StartsWith("warp misuse at " + SITE("@guarded-shfl") + ": kernel guarded_tree"));
    REQUIRE_THAT(e.message, Catch::Contains("block 0: lane 0 of warp 1 reads lane 16 through __shfl_down_sync, but lane 16 "
                                            "is not in the mask"));
  }
}

TEST_CASE("an undefined shuffle value that reaches device memory differs between schedules", "[warp][undefined]") {
  LenientUndefinedValues lenient;
  const int n = 45;
  Buf<int> in(simtest::iota(n, 1));
  Buf<int> sums(2, -1);
  // Each schedule gives the missing lanes a different value (0xCD bytes, 0x7F bytes, random), so
  // warp 1's stored sum differs and the comparison of the schedules reports it.
  cudasim::KernelError e = simtest::kernel_error([&] { unguarded_tree<<<1, 64>>>(in.get(), sums.get(), n); });
  REQUIRE(std::string(e.diagnosis) == "race_schedule");
  REQUIRE(e.code == 3);
  REQUIRE_THAT(e.message, Catch::Contains("the result depends on the order in which threads run"));
}

// A block of 16 threads: lanes 16-31 of its warp do not exist. A tree from offset 8 over width 32
// makes lanes 8-15 read lanes 16-23 at the first step; only lanes 0-7 feed lane 0's sum.
__global__ void partial_warp_discard(int* out) {
  int v = threadIdx.x + 1;
  for (int off = 8; off > 0; off /= 2) v += __shfl_down_sync(0xffffu, v, off);  // @partial-discard
  if (threadIdx.x == 0) out[0] = v;
}

TEST_CASE("a shuffle that reads a lane a partial warp lacks follows the same rule", "[warp][undefined][partial]") {
  Buf<int> out(1, -1);
  {
    LenientUndefinedValues lenient;
    partial_warp_discard<<<1, 16>>>(out.get());
    REQUIRE(out.download()[0] == 16 * 17 / 2);
  }
  StrictUndefinedValues strict;
  cudasim::KernelError e = simtest::kernel_error([&] { partial_warp_discard<<<1, 16>>>(out.get()); });
  REQUIRE(std::string(e.kind) == "warp");
  REQUIRE_THAT(e.message, Catch::Contains("lane 8 of warp 0 reads lane 16 through __shfl_down_sync, but lane 16 does not exist"));
}

// Cooperative groups on the simulator: the same results as the intrinsics they stand for, and the
// same diagnostics (divergence, deadlock, warp misuse, races ordered by tile.sync()).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "sim_test.h"

namespace cg = cooperative_groups;
using simtest::Buf;
using simtest::iota;

// Per block: out[block] = sum of in over the block, by warp tiles, shared memory and a last tile.
__global__ void cg_block_sum(const int* in, int* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ int partial[32];
  int i = blockIdx.x * blockDim.x + block.thread_rank();
  int v = i < n ? in[i] : 0;
  v = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    int w = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0;
    for (int o = warp.size() / 2; o > 0; o /= 2) w += warp.shfl_down(w, o);
    if (warp.thread_rank() == 0) out[blockIdx.x] = w;
  }
}

TEST_CASE("cg::reduce over warp tiles and block.sync() sum a block", "[cg]") {
  const int n = 1000, tpb = 256, blocks = (n + tpb - 1) / tpb;
  Buf<int> in(iota(n)), out(blocks, 0);
  cg_block_sum<<<blocks, tpb>>>(in, out, n);
  std::vector<int> got = out.download();
  for (int b = 0; b < blocks; ++b) {
    long long want = 0;
    for (int i = b * tpb; i < std::min(n, (b + 1) * tpb); ++i) want += i;
    REQUIRE(got[b] == want);
  }
}

// Per thread: what each tile operation gives, for tiles of 8 (static) and 4 (run-time size).
__global__ void cg_tile_ops(const int* in, int* out) {
  auto block = cg::this_thread_block();
  auto t8 = cg::tiled_partition<8>(block);
  cg::thread_group t4 = cg::tiled_partition(block, 4);
  unsigned r = block.thread_rank();
  int v = in[r];
  out[r * 8 + 0] = cg::reduce(t8, v, cg::greater<int>());
  out[r * 8 + 1] = cg::reduce(t8, v, cg::less<int>());
  out[r * 8 + 2] = (int)t8.ballot(v % 2 == 0);
  out[r * 8 + 3] = t8.shfl(v, 7);
  out[r * 8 + 4] = t8.shfl_up(v, 1);
  out[r * 8 + 5] = t8.shfl_xor(v, 1);
  out[r * 8 + 6] = t8.any(v == 3) * 10 + t8.all(v >= 0);
  t4.sync();
  out[r * 8 + 7] = (int)t4.thread_rank() * 100 + (int)t4.size() * 10 + (int)t8.meta_group_rank();
}

TEST_CASE("tile shuffles, ballot, any/all and cg::greater/cg::less give CUDA's results", "[cg]") {
  const int n = 64;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 64;
  Buf<int> in(h), out(n * 8, 0);
  cg_tile_ops<<<1, n>>>(in, out);
  std::vector<int> got = out.download();
  for (int r = 0; r < n; ++r) {
    int base = r & ~7, mx = -1, mn = 1 << 30, ballot = 0, any3 = 0;
    for (int k = 0; k < 8; ++k) {
      mx = std::max(mx, h[base + k]);
      mn = std::min(mn, h[base + k]);
      if (h[base + k] % 2 == 0) ballot |= 1 << k;
      if (h[base + k] == 3) any3 = 1;
    }
    INFO("thread " << r);
    CHECK(got[r * 8 + 0] == mx);
    CHECK(got[r * 8 + 1] == mn);
    CHECK(got[r * 8 + 2] == ballot);
    CHECK(got[r * 8 + 3] == h[base + 7]);
    CHECK(got[r * 8 + 4] == h[r % 8 == 0 ? r : r - 1]);
    CHECK(got[r * 8 + 5] == h[r ^ 1]);
    CHECK(got[r * 8 + 6] == any3 * 10 + 1);
    CHECK(got[r * 8 + 7] == (r % 4) * 100 + 40 + r / 8);
  }
}

// The odd lanes of each warp form a coalesced group: 16 members, ranks in lane order.
__global__ void cg_coalesced(int* out) {
  unsigned lane = threadIdx.x % 32;
  if (lane % 2 == 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    int sum = cg::reduce(odd, (int)lane, cg::plus<int>());
    out[threadIdx.x] = (int)odd.size() * 10000 + (int)odd.thread_rank() * 1000 + sum;
  } else {
    out[threadIdx.x] = -1;
  }
}

TEST_CASE("coalesced_threads() is the lanes that arrive together", "[cg]") {
  Buf<int> out(64, 0);
  cg_coalesced<<<1, 64>>>(out);
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) {
    int lane = t % 32;
    INFO("thread " << t);
    REQUIRE(got[t] == (lane % 2 ? 16 * 10000 + (lane / 2) * 1000 + 256 : -1));  // 1 + 3 + ... + 31 = 256
  }
}

__global__ void cg_block_sync_in_branch(int* out) {
  auto block = cg::this_thread_block();
  if (block.thread_rank() < 16) block.sync();  // @cg-divergent-sync
  out[block.thread_rank()] = 1;
}

TEST_CASE("block.sync() reached by only some threads is barrier divergence", "[cg][diagnostics]") {
  Buf<int> out(64, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { cg_block_sync_in_branch<<<1, 64>>>(out); });
  REQUIRE(std::string(e.kind) == "divergence");
  REQUIRE_THAT(e.message, Catch::Contains("the barrier at " + SITE("@cg-divergent-sync")));
}

__global__ void cg_tile_shfl_exited(int* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  if (tile.thread_rank() >= 16) return;
  out[tile.thread_rank()] = tile.shfl_down(1, 8);  // @cg-shfl-exited (lanes 8-15 read 16-23, which returned)
}

TEST_CASE("a tile shuffle that reads a returned lane is warp misuse at the caller's line", "[cg][diagnostics]") {
  // The puzzles' setting (harness.cpp): an undefined value is an error, not a warning.
  const bool was = cudasim::options().undefined_values_are_errors;
  cudasim::options().undefined_values_are_errors = true;
  struct Restore {
    bool was;
    ~Restore() { cudasim::options().undefined_values_are_errors = was; }
  } restore{was};
  Buf<int> out(32, 0);
  cudasim::KernelError e = simtest::kernel_error([&] { cg_tile_shfl_exited<<<1, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "warp");
  REQUIRE(std::string(e.diagnosis) == "warp_lane_returned");
  REQUIRE_THAT(e.message, Catch::StartsWith("warp misuse at " + SITE("@cg-shfl-exited")));
  REQUIRE_THAT(e.message, Catch::Contains("has already returned"));
}

// A tile of 32 writes shared memory, then lane 0 reads its neighbours': ordered by tile.sync(),
// a race without it.
template <bool Sync>
__global__ void cg_tile_publish(int* out) {
  __shared__ int s[32];
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  s[tile.thread_rank()] = (int)tile.thread_rank();
  if (Sync) tile.sync();
  if (tile.thread_rank() == 0) {
    int sum = 0;
    for (int k = 0; k < 32; ++k) sum += s[k];
    out[0] = sum;
  }
}

TEST_CASE("the memory checker orders shared memory across tile.sync()", "[cg][checker]") {
  Buf<int> out(1, 0);
  cg_tile_publish<true><<<1, 32>>>(out);
  REQUIRE(out.download()[0] == 496);
  cudasim::KernelError e = simtest::kernel_error([&] { cg_tile_publish<false><<<1, 32>>>(out); });
  REQUIRE(std::string(e.kind) == "race");
}

// labeled_partition of a warp tile by value % 3, then binary_partition of the whole warp by
// parity; block_tile_memory given to this_thread_block as portable code does.
__global__ void cg_labeled(const int* in, int* out) {
  __shared__ cg::block_tile_memory<64> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  auto warp = cg::tiled_partition<32>(block);
  const int t = block.thread_rank(), v = in[t];
  cg::coalesced_group same = cg::labeled_partition(warp, v % 3);
  int* o = out + 5 * t;
  o[0] = (int)same.size();
  o[1] = (int)same.thread_rank();
  o[2] = cg::reduce(same, v, cg::plus<int>());
  o[3] = same.shfl(v, (unsigned)same.size() - 1);  // the group's last member
  o[4] = (int)cg::binary_partition(warp, v & 1).size();
}

TEST_CASE("labeled_partition and binary_partition group a tile's threads by label", "[cg][partition]") {
  std::vector<int> values(64);
  for (int i = 0; i < 64; ++i) values[i] = (i * 11 + 5) % 17;
  Buf<int> in(values);
  Buf<int> out(5 * 64, -1);
  cg_labeled<<<1, 64>>>(in.get(), out.get());
  std::vector<int> got = out.download();
  for (int t = 0; t < 64; ++t) {
    CAPTURE(t);
    int size = 0, rank = 0, sum = 0, last = -1, parity = 0;
    for (int j = t / 32 * 32; j < t / 32 * 32 + 32; ++j) {
      if ((values[j] & 1) == (values[t] & 1)) ++parity;
      if (values[j] % 3 != values[t] % 3) continue;
      ++size;
      rank += j < t;
      sum += values[j];
      last = values[j];
    }
    REQUIRE(got[5 * t] == size);
    REQUIRE(got[5 * t + 1] == rank);
    REQUIRE(got[5 * t + 2] == sum);
    REQUIRE(got[5 * t + 3] == last);
    REQUIRE(got[5 * t + 4] == parity);
  }
}


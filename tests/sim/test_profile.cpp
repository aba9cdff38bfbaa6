// The profiler's counting rules (harness/sim/src/profile.h), called directly with warps whose
// counts are worked out by hand: 32 banks of 4-byte words, 32-byte global sectors. The end-to-end
// cases, which launch kernels with CUDASIM_PROFILE set, are in profile_e2e.cu.
#include <catch2/catch.hpp>

#include <cstdint>

#include "profile.h"

using cudasim::detail::global_cost;
using cudasim::detail::shared_cost;

namespace {

constexpr uint32_t kAll = 0xffffffffu;

// A warp whose lane L accesses `bytes` bytes at base + L * stride (byte offsets).
struct Warp {
  uintptr_t addr[32];
  uint8_t size[32];
  Warp(uintptr_t base, uintptr_t stride, uint8_t bytes) {
    for (unsigned l = 0; l < 32; ++l) {
      addr[l] = base + l * stride;
      size[l] = bytes;
    }
  }
};

}  // namespace

TEST_CASE("shared: consecutive words use each bank once: 1 wavefront", "[profile]") {
  Warp w(0, 4, 4);
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 1);
  CHECK(c.ideal == 1);
  CHECK(c.stride == 0);  // no conflict, no stride to name
}

TEST_CASE("shared: stride 2 words puts two words in every even bank: 2 wavefronts", "[profile]") {
  Warp w(0, 8, 4);  // words 0, 2, ..., 62: bank b holds words b and b + 32
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 2);
  CHECK(c.ideal == 1);
  CHECK(c.stride == 2);  // the report's "words 2 apart"
}

TEST_CASE("shared: stride 32 words puts all 32 in bank 0: 32 wavefronts", "[profile]") {
  Warp w(0, 128, 4);
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 32);
  CHECK(c.ideal == 1);
  CHECK(c.stride == 32);
}

TEST_CASE("shared: every lane reading one word is a broadcast: 1 wavefront", "[profile]") {
  Warp w(64, 0, 4);
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 1);
  CHECK(c.ideal == 1);
}

TEST_CASE("shared: two lanes on two words of one bank conflict, on one word they do not", "[profile]") {
  Warp w(0, 4, 4);
  w.addr[1] = 32 * 4;  // lane 1 reads word 32 (bank 0, like lane 0's word 0); bank 1 is idle
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 2);
  CHECK(c.ideal == 1);
  CHECK(c.stride == 1);  // 29 of the 31 distances between neighbouring lanes are 1 word
  w.addr[1] = 0;  // the same word as lane 0: shared by broadcast
  CHECK(shared_cost(kAll, w.addr, w.size).wavefronts == 1);
}

TEST_CASE("shared: 8-byte accesses are served a half-warp at a time: 2 wavefronts, ideal 2", "[profile]") {
  Warp w(0, 8, 8);  // each half-warp covers words 0-31 or 32-63, one per bank
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 2);
  CHECK(c.ideal == 2);
}

TEST_CASE("shared: 16-byte accesses are served a quarter-warp at a time: 4 wavefronts, ideal 4", "[profile]") {
  Warp w(0, 16, 16);
  auto c = shared_cost(kAll, w.addr, w.size);
  CHECK(c.wavefronts == 4);
  CHECK(c.ideal == 4);
}

TEST_CASE("shared: inactive lanes take no bank and no pass", "[profile]") {
  Warp stride32(0, 128, 4);
  // Lanes 0 and 1 only: words 0 and 32, both bank 0.
  auto two = shared_cost(0x3u, stride32.addr, stride32.size);
  CHECK(two.wavefronts == 2);
  CHECK(two.ideal == 1);
  // Stride 2 on the lower half-warp: words 0, 2, ..., 30, one per even bank.
  Warp stride2(0, 8, 4);
  CHECK(shared_cost(0x0000ffffu, stride2.addr, stride2.size).wavefronts == 1);
  // 16-byte accesses by the first quarter-warp alone: the three idle quarters cost nothing.
  Warp wide(0, 16, 16);
  auto quarter = shared_cost(0x000000ffu, wide.addr, wide.size);
  CHECK(quarter.wavefronts == 1);
  CHECK(quarter.ideal == 1);
}

TEST_CASE("global: 4-byte loads starting 4 bytes into a sector touch 5 sectors, ideal 4", "[profile]") {
  Warp w(0x10000 + 4, 4, 4);  // bytes 0x10004 to 0x10083: sectors 0x800 to 0x804
  auto c = global_cost(kAll, w.addr, w.size);
  CHECK(c.sectors == 5);
  CHECK(c.ideal == 4);
  CHECK(c.bytes == 128);
  CHECK(c.same_addr == 1);
}

TEST_CASE("global: a stride of 8 ints puts every lane in its own sector: 32 sectors, ideal 4", "[profile]") {
  Warp w(0x10000, 32, 4);
  auto c = global_cost(kAll, w.addr, w.size);
  CHECK(c.sectors == 32);
  CHECK(c.ideal == 4);
  CHECK(c.bytes == 128);
}

TEST_CASE("global: an atomic by every lane on one address: 1 sector, same_addr 32", "[profile]") {
  Warp w(0x10008, 0, 4);
  auto c = global_cost(kAll, w.addr, w.size);
  CHECK(c.sectors == 1);
  CHECK(c.ideal == 1);
  CHECK(c.bytes == 4);
  CHECK(c.same_addr == 32);
  // Half the lanes active: 16 of them serialise on it.
  CHECK(global_cost(0x0000ffffu, w.addr, w.size).same_addr == 16);
}

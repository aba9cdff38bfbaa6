// End-to-end profiler cases: kernels launched through the simulator with CUDASIM_PROFILE set (the
// profiler opens its file at static initialisation, so tests/CMakeLists.txt runs this program with
// the variable in its environment). The profiler writes a launch's record when the launch ends;
// each case reads it back and checks the per-site counts, worked out by hand below.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "sim_test.h"

using simtest::Buf;

namespace {

// The JSON line of the last profiled launch of `kernel`.
std::string record_of(const char* kernel) {
  const char* path = std::getenv("CUDASIM_PROFILE");
  INFO("run this program with CUDASIM_PROFILE=FILE (ctest does)");
  REQUIRE(path != nullptr);
  std::ifstream f(path);
  std::string line, found;
  while (std::getline(f, line))
    if (line.find(std::string("\"kernel\":\"") + kernel + "\"") != std::string::npos) found = line;
  REQUIRE(!found.empty());
  return found;
}

// The access object of `op` in a record (these kernels have one site per op).
std::string access_of(const std::string& record, const char* op) {
  size_t at = record.find(std::string("\"op\":\"") + op + "\"");
  REQUIRE(at != std::string::npos);
  size_t begin = record.rfind('{', at), end = record.find('}', at);
  return record.substr(begin, end - begin + 1);
}

long long field(const std::string& object, const char* name) {
  size_t at = object.find(std::string("\"") + name + "\":");
  INFO(object << " has no " << name);
  REQUIRE(at != std::string::npos);
  return std::atoll(object.c_str() + at + std::strlen(name) + 3);
}

}  // namespace

// Two blocks of two warps. Store: lane L writes word L of its warp's 32 (1 wavefront). Load: lane
// L reads word 2L mod 64, the even words 0-62 for both warps, two words in each even bank (2
// wavefronts, 1 of them a conflict). The global store: 32 consecutive ints a warp, 4 sectors.
__global__ void banked(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = int(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 2) % 64];
}

TEST_CASE("profile: shared wavefronts and conflicts, global sectors and barriers of a launch", "[profile]") {
  Buf<int> out(128, 0);
  banked<<<2, 64>>>(out);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::string rec = record_of("banked");
  CHECK(field(rec, "blocks") == 2);
  CHECK(field(rec, "warps") == 4);
  CHECK(field(rec, "block_barriers") == 2);
  std::string st = access_of(rec, "shared_st");
  CHECK(field(st, "inst") == 4);
  CHECK(field(st, "lanes") == 128);
  CHECK(field(st, "wavefronts") == 4);
  CHECK(field(st, "ideal") == 4);
  std::string ld = access_of(rec, "shared_ld");
  CHECK(field(ld, "inst") == 4);
  CHECK(field(ld, "wavefronts") == 8);
  CHECK(field(ld, "ideal") == 4);
  std::string gst = access_of(rec, "global_st");
  CHECK(field(gst, "inst") == 4);
  CHECK(field(gst, "sectors") == 16);
  CHECK(field(gst, "ideal_sectors") == 16);
  CHECK(field(gst, "bytes") == 512);
  // One __syncthreads site, passed by each of the 4 warps once.
  size_t b = rec.find("\"barriers\":[{");
  REQUIRE(b != std::string::npos);
  CHECK(field(rec.substr(b), "inst") == 4);
}

// One warp, 8 active lanes: they load in[1..8] (bytes 4-35: 2 sectors, ideal 1) and add them to one
// counter (1 sector, 8 lanes on one address).
__global__ void partial_sum(const int* in, int* total) {
  if (threadIdx.x < 8) atomicAdd(total, in[threadIdx.x + 1]);
}

TEST_CASE("profile: a partial warp's misaligned load and its atomics on one address", "[profile]") {
  Buf<int> in(std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Buf<int> total(1, 0);
  partial_sum<<<1, 32>>>(in, total);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(total.download()[0] == 36);
  std::string rec = record_of("partial_sum");
  std::string ld = access_of(rec, "global_ld");
  CHECK(field(ld, "inst") == 1);
  CHECK(field(ld, "lanes") == 8);
  CHECK(field(ld, "sectors") == 2);
  CHECK(field(ld, "ideal_sectors") == 1);
  CHECK(field(ld, "bytes") == 32);
  std::string atom = access_of(rec, "global_atom");
  CHECK(field(atom, "inst") == 1);
  CHECK(field(atom, "lanes") == 8);
  CHECK(field(atom, "sectors") == 1);
  CHECK(field(atom, "same_addr_max") == 8);
  CHECK(field(atom, "serial") == 8);
}

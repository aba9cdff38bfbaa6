// @PUZZLE@ driver: the input, the CPU reference and one run function per variant of puzzle.json.
//
// Scaffolded by `python3 scripts/puzzle.py new`. Each variant `name` of puzzle.json needs a
// function `int run_name(const harness::Case&)` here (a '-' in the name becomes '_'); CMake
// generates the table that calls it. harness/include/harness/harness.h is the API: inputs,
// device buffers, check_kernels() and finish(), which compares and prints the verdict.
//
// Inputs: the show input (`run`) is a[i] = i, so the sums can be checked by eye; a random case
// (`check`, `grade`) draws ints uniform in [-100, 100] from its seed.
// Reference: the sum of every tile of tpb elements, one per block.
#include <cstdio>
#include <vector>

#include "harness/harness.h"

// The launcher in @PUZZLE@.cu: d_partials[b] = the sum of d_in[b * tpb .. (b + 1) * tpb), cut at n.
void @PUZZLE@_block(const int* d_in, int* d_partials, int n, int tpb);

namespace {

std::vector<int> block_sums(const std::vector<int>& a, int tpb) {
  std::vector<int> sums((a.size() + tpb - 1) / tpb, 0);
  for (size_t i = 0; i < a.size(); ++i) sums[i / tpb] += a[i];
  return sums;
}

}  // namespace

int run_block(const harness::Case& c) {
  if (c.tpb < 2 || c.tpb > 1024 || (c.tpb & (c.tpb - 1)))
    return refuse(c, "the tree halves the block at every step: tpb must be a power of two from 2 to 1024");
  if (c.n > (1LL << 30)) return refuse(c, "n must stay below 2^30 (int indices)");
  const std::vector<int> in = c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, -100, 100);
  const std::vector<int> expected = block_sums(in, c.tpb);
  harness::DeviceArray<int> d_in(in), d_partials(expected.size());
  @PUZZLE@_block(d_in.get(), d_partials.get(), int(c.n), c.tpb);
  harness::check_kernels("@PUZZLE@_block");
  const harness::Config cfg = {{"SIZE", c.n}, {"TPB", c.tpb}, {"blocks", (long long)expected.size()}};
  return harness::finish(c, cfg, in, d_partials.download(), expected);
}

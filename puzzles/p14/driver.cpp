// p14 driver: the input, the CPU reference and one run function per variant of puzzle.json.
#include <cstdio>

#include "harness/harness.h"

// The launchers in p14.cu.
void p14_naive(const int* d_in, int* d_out, int n, int tpb);
void p14_simple(const int* d_in, int* d_out, int n, int tpb);
void p14_double_buffer(const int* d_in, int* d_out, int n, int tpb);
void p14_brent_kung(const int* d_in, int* d_out, int n, int tpb);
void p14_complete(const int* d_in, int* d_out, int n, int tpb);

namespace {

using Launcher = void (*)(const int*, int*, int, int);
enum Scan { kInclusive, kExclusive };

std::vector<int> reference(const std::vector<int>& a, Scan kind) {
  std::vector<int> r(a.size());
  long long sum = 0;  // 64-bit, so the reference itself cannot overflow
  for (size_t i = 0; i < a.size(); ++i) {
    if (kind == kInclusive) sum += a[i];
    r[i] = int(sum);
    if (kind == kExclusive) sum += a[i];
  }
  return r;
}

int refuse(const harness::Case& c, const char* why) {
  std::fprintf(stderr, "error: p14 --%s with n = %lld, tpb = %d: %s\n", c.variant.c_str(), c.n, c.tpb, why);
  return 2;  // a usage error: the case is outside what the variant promises
}

int run(const harness::Case& c, Launcher launch, const char* name, Scan kind, harness::Config cfg) {
  auto in = c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, -9, 9);
  harness::DeviceArray<int> d_in(in), d_out(c.n);
  launch(d_in.get(), d_out.get(), int(c.n), c.tpb);
  harness::check_kernels(name);
  cfg.insert(cfg.begin(), {{"SIZE", c.n}, {"TPB", c.tpb}});
  return harness::finish(c, cfg, in, d_out.download(), reference(in, kind));
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

}  // namespace

int run_naive(const harness::Case& c) {
  if (c.n > 4096) return refuse(c, "the naive scan does O(n^2) work; it takes n <= 4096");
  return run(c, p14_naive, "p14_naive", kInclusive, {{"blocks", ceil_div(c.n, c.tpb)}});
}

int run_simple(const harness::Case& c) {
  if (c.n > c.tpb) return refuse(c, "one block scans at most tpb elements");
  return run(c, p14_simple, "p14_simple", kInclusive, {{"blocks", 1}});
}

int run_double_buffer(const harness::Case& c) {
  if (c.n > c.tpb) return refuse(c, "one block scans at most tpb elements");
  return run(c, p14_double_buffer, "p14_double_buffer", kExclusive, {{"blocks", 1}});
}

int run_brent_kung(const harness::Case& c) {
  if (c.tpb & (c.tpb - 1)) return refuse(c, "the Brent-Kung tree needs a power-of-two tpb");
  if (c.n > 2LL * c.tpb) return refuse(c, "one block of tpb threads scans at most 2 * tpb elements");
  return run(c, p14_brent_kung, "p14_brent_kung", kExclusive, {{"blocks", 1}});
}

int run_complete(const harness::Case& c) {
  if (c.n > (1LL << 30)) return refuse(c, "n must stay below 2^30 (int indices)");
  long long levels = 1;  // scans of the input, of its block totals, of theirs...
  for (long long m = c.n; m > 2LL * c.tpb; m = ceil_div(m, 2LL * c.tpb)) ++levels;
  return run(c, p14_complete, "p14_complete", kInclusive,
             {{"blocks", ceil_div(c.n, 2LL * c.tpb)}, {"levels", levels}});
}

// p14 driver: the input, the CPU reference and one run function per variant of puzzle.json.
#include <cstdio>
#include <memory>

#include "harness/bench.h"
#include "harness/harness.h"

// The launchers in p14.cu.
void p14_naive(const int* d_in, int* d_out, int n, int tpb);
void p14_simple(const int* d_in, int* d_out, int n, int tpb);
void p14_double_buffer(const int* d_in, int* d_out, int n, int tpb);
void p14_brent_kung(const int* d_in, int* d_out, int n, int tpb);
void p14_complete(const int* d_in, int* d_out, int n, int tpb);
// d_work: scratch of single_pass_work_ints(n, tpb) ints (the tiles' status words and the ticket).
void p14_single_pass(const int* d_in, int* d_out, int* d_work, int n, int tpb);

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

// A case outside what the variant promises: a usage error (exit 2) that says why.
using harness::refuse;

int run(const harness::Case& c, Launcher launch, const char* name, Scan kind, harness::Config cfg) {
  auto in = c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, -9, 9);
  harness::DeviceArray<int> d_in(in), d_out(c.n);
  launch(d_in.get(), d_out.get(), int(c.n), c.tpb);
  harness::check_kernels(name);
  cfg.insert(cfg.begin(), {{"SIZE", c.n}, {"TPB", c.tpb}});
  return harness::finish(c, cfg, in, d_out.download(), reference(in, kind));
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// What p14.cu asks of the caller of p14_single_pass: a status word (two ints) per tile and a ticket;
// a tile holds at least tpb elements, so 3 * ceil(n / tpb) + 1 ints always suffice.
long long single_pass_work_ints(long long n, int tpb) { return 3 * ceil_div(n, tpb) + 1; }

// Why p14 --single-pass cannot take this case, or nullptr.
const char* single_pass_unsupported(long long n, int tpb) {
  if (n > (1LL << 30)) return "n must stay below 2^30 (int indices)";
  if (tpb % 32 != 0 || tpb > 1024) return "the look-back and the row scans work in whole warps: tpb must be a multiple of 32, at most 1024";
  return nullptr;
}

// Ints per thread in p14.cu's single-pass kernel (four int4 loads), for the config line only.
constexpr long long kSinglePassPerThread = 16;

// ---- the benchmark (`p14_gpu --bench`): --complete and --single-pass next to
// cub::DeviceScan::InclusiveSum. Only they scale past one block; the single-block variants and
// the O(n^2) warm-up are refused at benchmark sizes. A scan must read every element and write every result: 8n bytes.

struct BenchInput {
  long long n = 0;
  uint64_t seed = 0;
  std::vector<int> expected;
  std::unique_ptr<harness::DeviceArray<int>> d_in;
};

std::shared_ptr<BenchInput> bench_input(const harness::Case& c) {
  static std::shared_ptr<BenchInput> cached;  // one input per size, shared by every row
  if (cached && cached->n == c.n && cached->seed == c.seed) return cached;
  cached.reset();
  auto b = std::make_shared<BenchInput>();
  b->n = c.n;
  b->seed = c.seed;
  const auto host = harness::random_ints(c.n, c.seed, -9, 9);
  b->expected = reference(host, kInclusive);
  b->d_in.reset(new harness::DeviceArray<int>(host));
  cached = b;
  return b;
}

std::string compare(const harness::DeviceArray<int>& out, const std::vector<int>& expected) {
  const auto got = out.download();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i])
      return "out[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " + std::to_string(expected[i]);
  return "";
}

harness::bench::Job scan_job(const harness::Case& c, Launcher launch) {
  harness::bench::Job j;
  j.bytes = 8.0 * double(c.n);
  if (launch != p14_complete) {
    j.refused = "one block, or O(n^2) work: only --complete and --single-pass take benchmark sizes";
    return j;
  }
  auto in = bench_input(c);
  auto out = std::make_shared<harness::DeviceArray<int>>(size_t(c.n));
  const int n = int(c.n), tpb = c.tpb;
  j.launch = [in, out, launch, n, tpb] { launch(in->d_in->get(), out->get(), n, tpb); };
  j.verify = [in, out] { return compare(*out, in->expected); };
  return j;
}

harness::bench::Job single_pass_job(const harness::Case& c) {
  harness::bench::Job j;
  j.bytes = 8.0 * double(c.n);
  if (const char* why = single_pass_unsupported(c.n, c.tpb)) {
    j.refused = why;
    return j;
  }
  auto in = bench_input(c);
  auto out = std::make_shared<harness::DeviceArray<int>>(size_t(c.n));
  auto work = std::make_shared<harness::DeviceArray<int>>(size_t(single_pass_work_ints(c.n, c.tpb)));
  const int n = int(c.n), tpb = c.tpb;
  j.launch = [in, out, work, n, tpb] { p14_single_pass(in->d_in->get(), out->get(), work->get(), n, tpb); };
  j.verify = [in, out] { return compare(*out, in->expected); };
  return j;
}

harness::bench::Job cub_job(const harness::Case& c) {
  harness::bench::Job j;
  j.bytes = 8.0 * double(c.n);
  auto in = bench_input(c);
  auto out = std::make_shared<harness::DeviceArray<int>>(size_t(c.n));
  size_t temp_bytes = 0;
  harness::bench::cub_inclusive_sum(nullptr, temp_bytes, in->d_in->get(), out->get(), c.n);
  auto temp = std::make_shared<harness::DeviceArray<char>>(temp_bytes);
  j.launch = [in, out, temp, temp_bytes] {
    size_t bytes = temp_bytes;
    harness::bench::cub_inclusive_sum(temp->get(), bytes, in->d_in->get(), out->get(), in->n);
  };
  j.verify = [in, out] { return compare(*out, in->expected); };
  return j;
}

const bool kBenchRegistered = [] {
  harness::bench::Settings s;
  s.base = "complete";
  s.baseline_name = "cub";
  s.baseline_label = "cub::DeviceScan::InclusiveSum";
  if (harness::bench::cub_available()) s.baseline = cub_job;
  s.targets = {{"single-pass", 1.00, 1LL << 28}};
  harness::bench::configure(s);
  const std::pair<const char*, Launcher> variants[] = {{"naive", p14_naive},
                                                       {"simple", p14_simple},
                                                       {"double-buffer", p14_double_buffer},
                                                       {"brent-kung", p14_brent_kung},
                                                       {"complete", p14_complete}};
  for (const auto& v : variants) {
    const Launcher launch = v.second;
    harness::bench::add(v.first, [launch](const harness::Case& c) { return scan_job(c, launch); });
  }
  harness::bench::add("single-pass", single_pass_job);
  return true;
}();

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

int run_single_pass(const harness::Case& c) {
  if (const char* why = single_pass_unsupported(c.n, c.tpb)) return refuse(c, why);
  auto in = c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, -9, 9);
  harness::DeviceArray<int> d_in(in), d_out(c.n), d_work(single_pass_work_ints(c.n, c.tpb));
  p14_single_pass(d_in.get(), d_out.get(), d_work.get(), int(c.n), c.tpb);
  harness::check_kernels("p14_single_pass");
  const harness::Config cfg = {{"SIZE", c.n}, {"TPB", c.tpb}, {"tiles", ceil_div(c.n, kSinglePassPerThread * c.tpb)}};
  return harness::finish(c, cfg, in, d_out.download(), reference(in, kInclusive));
}

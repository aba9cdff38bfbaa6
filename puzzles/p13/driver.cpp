// p13 driver: the input, the CPU reference and one run function per variant of puzzle.json.
//
// Inputs. The show input is a single peak of negative values, a[i] = -0.5 - |i - peak| with
// peak = 2n/3: for n = 10 that is [-6.5, -5.5, ..., -0.5 (at i = 6), ..., -3.5], so the answer
// (-0.5) can be checked by eye, and a kernel that pads with 0 instead of -FLT_MAX shows 0.
//
// A random case (--seed S) picks its distribution from the seed, so that a run of consecutive
// seeds (which is what `check` uses: seed, seed + 1, ...) meets all three within three cases:
//   S % 3 == 0   all negative: uniform in [-1000, -1)
//   S % 3 == 1   mixed signs:  uniform in [-1000, 1000)
//   S % 3 == 2   all negative with the maximum at the very end: as 0, then a[n-1] = -0.5
// All-negative inputs are what catch a 0 identity (any case whose last block is not full pads
// with it); the maximum in the last element catches a load that drops the tail of the array.
// The distribution is printed on an `inputs:` line before the `case:` line (a harness::Say line).
//
// The result is one float, compared exactly: a maximum only ever selects one of the inputs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "harness/bench.h"
#include "harness/harness.h"

// The launchers in p13.cu: d_result[0] = max(d_in[0 .. n)).
void p13_block(const float* d_in, float* d_result, int n, int tpb);
void p13_complete(const float* d_in, float* d_result, int n, int tpb);
// d_partials: at least ceil(n / tpb) floats; d_ticket: zero before the first call, left at zero.
void p13_single_pass(const float* d_in, float* d_result, float* d_partials, unsigned* d_ticket, int n, int tpb);

namespace {

using Launcher = void (*)(const float*, float*, int, int);

enum Kind { kAllNegative = 0, kMixed = 1, kNegativeMaxLast = 2 };

harness::Say kind_name(Kind k) {
  switch (k) {
    case kAllNegative: return harness::Say("p13.all_negative", "all negative, uniform in [-1000, -1)");
    case kMixed: return harness::Say("p13.mixed", "mixed signs, uniform in [-1000, 1000)");
    default:
      return harness::Say("p13.negative_max_last", "all negative, uniform in [-1000, -1), the maximum (-0.5) last");
  }
}

std::vector<float> show_input(long long n) {
  std::vector<float> a(n);
  const long long peak = 2 * n / 3;
  for (long long i = 0; i < n; ++i) a[i] = -0.5f - float(std::llabs(i - peak));
  return a;
}

std::vector<float> random_input(long long n, uint64_t seed) {
  const Kind kind = Kind(seed % 3);
  harness::Say("p13.inputs", "inputs:   {distribution}").fact("distribution", kind_name(kind)).print();
  if (kind == kMixed) return harness::random_floats(n, seed, -1000.0f, 1000.0f);
  std::vector<float> a = harness::random_floats(n, seed, -1000.0f, -1.0f);
  if (kind == kNegativeMaxLast) a[n - 1] = -0.5f;
  return a;
}

float reference(const std::vector<float>& a) {
  float m = a[0];
  for (float x : a) m = std::max(m, x);
  return m;
}

// A case outside what the variant promises: a usage error (exit 2) that says why.
using harness::refuse;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

int run(const harness::Case& c, Launcher launch, const char* name) {
  if (c.tpb < 2 || (c.tpb & (c.tpb - 1)))
    return refuse(c, "the tree halves the block at every step: tpb must be a power of two, at least 2");
  if (c.n > (1LL << 30)) return refuse(c, "n must stay below 2^30 (int indices)");
  auto in = c.show ? show_input(c.n) : random_input(c.n, c.seed);
  harness::DeviceArray<float> d_in(in), d_result(1);
  launch(d_in.get(), d_result.get(), int(c.n), c.tpb);
  harness::check_kernels(name);
  long long passes = 0;  // launches until one value is left: n -> ceil(n / tpb) -> ... -> 1
  for (long long m = c.n; m > 1; m = ceil_div(m, c.tpb)) ++passes;
  harness::Config cfg = {{"SIZE", c.n}, {"TPB", c.tpb}, {"blocks", ceil_div(c.n, c.tpb)}, {"passes", passes}};
  return harness::finish(c, cfg, in, d_result.download(), std::vector<float>{reference(in)});
}

// ---- the benchmark (`p13_gpu --bench`): every variant next to cub::DeviceReduce::Max -------
// A maximum reads every element once: 4n bytes. One mixed-sign input per size, shared by all rows.

struct BenchInput {
  long long n = 0;
  uint64_t seed = 0;
  float expected = 0;
  std::unique_ptr<harness::DeviceArray<float>> d_in;
};

std::shared_ptr<BenchInput> bench_input(const harness::Case& c) {
  static std::shared_ptr<BenchInput> cached;
  if (cached && cached->n == c.n && cached->seed == c.seed) return cached;
  cached.reset();  // free the previous size first
  auto b = std::make_shared<BenchInput>();
  b->n = c.n;
  b->seed = c.seed;
  const auto host = harness::random_floats(c.n, c.seed, -1000.0f, 1000.0f);
  b->expected = reference(host);
  b->d_in.reset(new harness::DeviceArray<float>(host));
  cached = b;
  return b;
}

std::string verify_max(const BenchInput& in, const harness::DeviceArray<float>& result) {
  float got = 0;
  if (cudaMemcpy(&got, result.get(), sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess) return "could not read the result";
  return got == in.expected ? "" : "got " + std::to_string(got) + ", expected " + std::to_string(in.expected);
}

harness::bench::Job max_job(const harness::Case& c, Launcher launch) {
  harness::bench::Job j;
  j.bytes = 4.0 * double(c.n);
  if (c.tpb < 2 || (c.tpb & (c.tpb - 1))) {
    j.refused = "tpb must be a power of two";
    return j;
  }
  auto in = bench_input(c);
  auto result = std::make_shared<harness::DeviceArray<float>>(1);
  const int n = int(c.n), tpb = c.tpb;
  j.launch = [in, result, launch, n, tpb] { launch(in->d_in->get(), result->get(), n, tpb); };
  j.verify = [in, result] { return verify_max(*in, *result); };
  return j;
}

// Why p13 --single-pass cannot take this case, or nullptr.
const char* single_pass_unsupported(const harness::Case& c) {
  if (c.n > (1LL << 30)) return "n must stay below 2^30 (int indices)";
  if (c.tpb % 32 != 0 || c.tpb > 1024) return "warp shuffles need whole warps: tpb must be a multiple of 32, at most 1024";
  return nullptr;
}

// The scratch space p13_single_pass keeps between calls: the ticket must be left at zero.
struct SinglePassWork {
  harness::DeviceArray<float> partials;
  harness::DeviceArray<unsigned> ticket;
  explicit SinglePassWork(long long n, int tpb) : partials(size_t(ceil_div(n, tpb))), ticket(1) {
    harness::check(cudaMemset(ticket.get(), 0, sizeof(unsigned)), "cudaMemset of the ticket");
  }
};

harness::bench::Job single_pass_job(const harness::Case& c) {
  harness::bench::Job j;
  j.bytes = 4.0 * double(c.n);
  if (const char* why = single_pass_unsupported(c)) {
    j.refused = why;
    return j;
  }
  auto in = bench_input(c);
  auto result = std::make_shared<harness::DeviceArray<float>>(1);
  auto work = std::make_shared<SinglePassWork>(c.n, c.tpb);
  const int n = int(c.n), tpb = c.tpb;
  j.launch = [in, result, work, n, tpb] {
    p13_single_pass(in->d_in->get(), result->get(), work->partials.get(), work->ticket.get(), n, tpb);
  };
  j.verify = [in, result] { return verify_max(*in, *result); };
  return j;
}

harness::bench::Job cub_job(const harness::Case& c) {
  harness::bench::Job j;
  j.bytes = 4.0 * double(c.n);
  auto in = bench_input(c);
  auto result = std::make_shared<harness::DeviceArray<float>>(1);
  size_t temp_bytes = 0;
  harness::bench::cub_max(nullptr, temp_bytes, in->d_in->get(), result->get(), c.n);
  auto temp = std::make_shared<harness::DeviceArray<char>>(temp_bytes);
  j.launch = [in, result, temp, temp_bytes] {
    size_t bytes = temp_bytes;
    harness::bench::cub_max(temp->get(), bytes, in->d_in->get(), result->get(), in->n);
  };
  j.verify = [in, result] { return verify_max(*in, *result); };
  return j;
}

const bool kBenchRegistered = [] {
  harness::bench::Settings s;
  s.base = "block";
  s.baseline_name = "cub";
  s.baseline_label = "cub::DeviceReduce::Max";
  if (harness::bench::cub_available()) s.baseline = cub_job;
  s.targets = {{"single-pass", 1.00, 1LL << 28}};
  harness::bench::configure(s);
  harness::bench::add("block", [](const harness::Case& c) { return max_job(c, p13_block); });
  harness::bench::add("complete", [](const harness::Case& c) { return max_job(c, p13_complete); });
  harness::bench::add("single-pass", single_pass_job);
  return true;
}();

}  // namespace

int run_block(const harness::Case& c) { return run(c, p13_block, "p13_block"); }

int run_complete(const harness::Case& c) { return run(c, p13_complete, "p13_complete"); }

// The driver calls p13_single_pass twice on the same scratch space and checks the second result:
// a ticket that is not reset to zero spoils every call after the first.
int run_single_pass(const harness::Case& c) {
  if (const char* why = single_pass_unsupported(c)) return refuse(c, why);
  auto in = c.show ? show_input(c.n) : random_input(c.n, c.seed);
  const std::vector<float> expected = {reference(in)};
  harness::DeviceArray<float> d_in(in), d_result(1);
  SinglePassWork work(c.n, c.tpb);
  p13_single_pass(d_in.get(), d_result.get(), work.partials.get(), work.ticket.get(), int(c.n), c.tpb);
  harness::check_kernels("p13_single_pass");
  std::vector<float> got = d_result.download();
  if (got == expected) {
    harness::check(cudaMemset(d_result.get(), 0xCD, sizeof(float)), "cudaMemset of the result");
    p13_single_pass(d_in.get(), d_result.get(), work.partials.get(), work.ticket.get(), int(c.n), c.tpb);
    harness::check_kernels("p13_single_pass");
    got = d_result.download();
    if (got != expected)
      harness::Say("p13.second_call_wrong",
                   "note: the driver calls p13_single_pass twice on the same input. Call 1 of 2 returned the right "
                   "maximum; call 2 of 2, with the ticket as call 1 left it, did not (below): the last block must reset "
                   "the ticket to zero for the next call. Before call 2 the driver fills d_result with the byte 0xCD, "
                   "so -4.316021e+08 means call 2 never wrote its result.")
          .print();
  } else {
    harness::Say("p13.first_call_wrong",
                 "note: the driver calls p13_single_pass twice on the same input; call 1 of 2, with the ticket at zero, "
                 "already returned a wrong maximum (below).")
        .print();
  }
  const harness::Config cfg = {{"SIZE", c.n}, {"TPB", c.tpb}, {"launches", 1}};
  return harness::finish(c, cfg, in, got, expected);
}

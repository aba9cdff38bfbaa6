// p12 driver: the input, the CPU reference, one run function per variant of puzzle.json, and
// the GPU benchmark (`p12_gpu --bench`, see harness/include/harness/bench.h).
#include <cstdio>
#include <memory>
#include <string>

#include "harness/bench.h"
#include "harness/harness.h"

// The launchers in p12.cu. d_work: scratch of work_ints(n, tpb) ints, zero before the first call.
void p12_atomic(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k1(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k2(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k3(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k4(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k5(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k6(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_k7(const int* d_in, int* d_out, int* d_work, int n, int tpb);
void p12_shuffle(const int* d_in, int* d_out, int* d_work, int n, int tpb);

namespace {

using Launcher = void (*)(const int*, int*, int*, int, int);

// What block sizes a variant takes: k1..k4 halve a power-of-two tree; k5..k7 also hand the last
// 64 values to one warp; shuffle works in whole warps.
enum class Shape { Any, PowerOfTwo, PowerOfTwoAtLeast64, MultipleOf32 };

struct Spec {
  const char* kernel;   // for error messages
  Launcher launch;
  Shape shape;
  int per_thread;       // atomic, k1..k6: elements per thread (for the config line); 0: not shown
  bool relaunch;        // k1..k6: the host loop launches again on the partial sums
  bool twice;           // keeps state in d_work between calls: run it twice, check the second answer
};

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
long long work_ints(long long n, int tpb) { return 2 * ceil_div(n, tpb) + 32; }

// Why this case is outside what the variant promises, or nullptr.
const char* unsupported(const Spec& s, long long n, int tpb) {
  const bool pow2 = tpb > 0 && (tpb & (tpb - 1)) == 0;
  if (n >= (1LL << 29)) return "n must stay below 2^29 (so that the sum of the inputs, each up to 3, fits in an int)";
  if (tpb > 1024) return "a block has at most 1024 threads";
  switch (s.shape) {
    case Shape::Any: return nullptr;
    case Shape::PowerOfTwo: return pow2 ? nullptr : "the halving tree needs a power-of-two tpb";
    case Shape::PowerOfTwoAtLeast64:
      return pow2 && tpb >= 64 ? nullptr : "the tree needs a power-of-two tpb of at least 64 (the last warp adds 64 values)";
    case Shape::MultipleOf32: return tpb % 32 == 0 ? nullptr : "warp shuffles need whole warps: tpb must be a multiple of 32";
  }
  return nullptr;
}

long long reference(const std::vector<int>& a) {
  long long sum = 0;  // 64-bit, so the reference itself cannot overflow
  for (int x : a) sum += x;
  return sum;
}

// Random inputs are uniform in [1, 3]: every element is at least 1, so an element that is lost or
// added twice always changes the sum, and a sum of fewer than 2^29 of them (at most 3 * 2^29)
// always fits in an int. The show input is a[i] = i.
std::vector<int> input(const harness::Case& c) {
  return c.show ? harness::iota_ints(c.n) : harness::random_ints(c.n, c.seed, 1, 3);
}

int run(const harness::Case& c, const Spec& s) {
  // a usage error (exit 2): the case is outside what the variant promises
  if (const char* why = unsupported(s, c.n, c.tpb)) return harness::refuse(c, why);
  const auto in = input(c);
  const std::vector<int> expected = {int(reference(in))};
  harness::DeviceArray<int> d_in(in), d_out(1), d_work(work_ints(c.n, c.tpb));
  harness::check(cudaMemset(d_work.get(), 0, d_work.size() * sizeof(int)), "cudaMemset of the scratch space");
  s.launch(d_in.get(), d_out.get(), d_work.get(), int(c.n), c.tpb);
  harness::check_kernels(s.kernel);
  std::vector<int> got = d_out.download();
  if (s.twice && got == expected) {  // what the first call leaves in d_work must not spoil the next one
    harness::check(cudaMemset(d_out.get(), 0xCD, sizeof(int)), "cudaMemset of the output");
    s.launch(d_in.get(), d_out.get(), d_work.get(), int(c.n), c.tpb);
    harness::check_kernels(s.kernel);
    got = d_out.download();
    if (got != expected)
      harness::Say("p12.second_call_wrong",
                   "note: the driver calls {function} twice on the same input. Call 1 of 2 returned the right sum; "
                   "call 2 of 2, with d_work as call 1 left it, did not (below): the kernel must leave its scratch "
                   "state (a ticket or counter in d_work) as it found it, zero, for the next call. Before call 2 the "
                   "driver fills d_out with the byte 0xCD, so -842150451 means call 2 never wrote its result.")
          .fact("function", "p12_" + c.variant)
          .print();
  } else if (s.twice) {
    harness::Say("p12.first_call_wrong",
                 "note: the driver calls {function} twice on the same input; call 1 of 2, with d_work all zero, "
                 "already returned a wrong sum (below).")
        .fact("function", "p12_" + c.variant)
        .print();
  }
  harness::Config cfg = {{"SIZE", c.n}, {"TPB", c.tpb}};
  if (s.per_thread) {
    const long long tile = s.per_thread * (long long)c.tpb;
    cfg.push_back({"blocks", ceil_div(c.n, tile)});
    if (s.relaunch) {  // the host loop of p12.cu launches until one partial sum is left
      long long passes = 1;
      for (long long m = ceil_div(c.n, tile); m > 1; m = ceil_div(m, tile)) ++passes;
      cfg.push_back({"passes", passes});
    }
  }
  return harness::finish(c, cfg, in, got, expected);
}

const Spec kAtomic = {"reduce_atomic", p12_atomic, Shape::Any, 1, false, false};
const Spec kK1 = {"reduce_k1", p12_k1, Shape::PowerOfTwo, 1, true, false};
const Spec kK2 = {"reduce_k2", p12_k2, Shape::PowerOfTwo, 1, true, false};
const Spec kK3 = {"reduce_k3", p12_k3, Shape::PowerOfTwo, 1, true, false};
const Spec kK4 = {"reduce_k4", p12_k4, Shape::PowerOfTwo, 2, true, false};
const Spec kK5 = {"reduce_k5", p12_k5, Shape::PowerOfTwoAtLeast64, 2, true, false};
const Spec kK6 = {"reduce_k6", p12_k6, Shape::PowerOfTwoAtLeast64, 2, true, false};
const Spec kK7 = {"reduce_k7", p12_k7, Shape::PowerOfTwoAtLeast64, 0, false, false};
const Spec kShuffle = {"reduce_shuffle", p12_shuffle, Shape::MultipleOf32, 0, false, true};

// ---- the benchmark --------------------------------------------------------------------------

// One input per size, shared by every variant, CUB and the copy (1 GiB at n = 2^28).
struct BenchInput {
  long long n = 0;
  uint64_t seed = 0;
  long long expected = 0;
  std::unique_ptr<harness::DeviceArray<int>> d_in;
};

std::shared_ptr<BenchInput> bench_input(const harness::Case& c) {
  static std::shared_ptr<BenchInput> cached;
  if (cached && cached->n == c.n && cached->seed == c.seed) return cached;
  cached.reset();  // free the previous size first
  auto b = std::make_shared<BenchInput>();
  b->n = c.n;
  b->seed = c.seed;
  {
    harness::Case rc = c;
    rc.show = false;
    const auto host = input(rc);
    b->expected = reference(host);
    b->d_in.reset(new harness::DeviceArray<int>(host));
  }
  cached = b;
  return b;
}

harness::bench::Job bench_job(const harness::Case& c, const Spec& s) {
  harness::bench::Job j;
  j.bytes = 4.0 * double(c.n);  // every input int read once
  if (const char* why = unsupported(s, c.n, c.tpb)) {
    j.refused = why;
    return j;
  }
  auto in = bench_input(c);
  auto out = std::make_shared<harness::DeviceArray<int>>(1);
  auto work = std::make_shared<harness::DeviceArray<int>>(work_ints(c.n, c.tpb));
  cudaMemset(work->get(), 0, work->size() * sizeof(int));
  const Launcher launch = s.launch;
  const int n = int(c.n), tpb = c.tpb;
  j.launch = [in, out, work, launch, n, tpb] { launch(in->d_in->get(), out->get(), work->get(), n, tpb); };
  j.verify = [in, out]() -> std::string {
    int got = 0;
    if (cudaMemcpy(&got, out->get(), sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess) return "could not read the result";
    if (got == int(in->expected)) return "";
    return "got " + std::to_string(got) + ", expected " + std::to_string(in->expected);
  };
  return j;
}

harness::bench::Job cub_job(const harness::Case& c) {
  harness::bench::Job j;
  j.bytes = 4.0 * double(c.n);
  auto in = bench_input(c);
  auto out = std::make_shared<harness::DeviceArray<int>>(1);
  size_t temp_bytes = 0;
  harness::bench::cub_sum(nullptr, temp_bytes, in->d_in->get(), out->get(), c.n);
  auto temp = std::make_shared<harness::DeviceArray<char>>(temp_bytes);
  j.launch = [in, out, temp, temp_bytes] {
    size_t bytes = temp_bytes;
    harness::bench::cub_sum(temp->get(), bytes, in->d_in->get(), out->get(), in->n);
  };
  j.verify = [in, out]() -> std::string {
    int got = 0;
    cudaMemcpy(&got, out->get(), sizeof got, cudaMemcpyDeviceToHost);
    return got == int(in->expected) ? "" : "CUB got " + std::to_string(got) + ", expected " + std::to_string(in->expected);
  };
  return j;
}

harness::bench::Prepare prepare(const Spec& s) {
  return [&s](const harness::Case& c) { return bench_job(c, s); };
}

// "Optimizing Parallel Reduction in CUDA" (Harris, 2007): 2^22 ints on a G80, GB/s per kernel.
const bool kBenchRegistered = [] {
  harness::bench::Settings s;
  s.base = "k1";
  s.baseline_name = "cub";
  s.baseline_label = "cub::DeviceReduce::Sum";
  if (harness::bench::cub_available()) s.baseline = cub_job;
  s.reference_label = "G80 2007";
  s.reference_note = "Harris, Optimizing Parallel Reduction in CUDA (2007): 2^22 ints on a G80 (86.4 GB/s peak), 128 threads per block";
  s.targets = {{"k7", 0.80, 1LL << 28}, {"shuffle", 1.00, 1LL << 28}};
  harness::bench::configure(s);
  harness::bench::add("atomic", prepare(kAtomic));
  harness::bench::add("k1", prepare(kK1), 2.083);
  harness::bench::add("k2", prepare(kK2), 4.854);
  harness::bench::add("k3", prepare(kK3), 9.741);
  harness::bench::add("k4", prepare(kK4), 17.377);
  harness::bench::add("k5", prepare(kK5), 31.289);
  harness::bench::add("k6", prepare(kK6), 43.996);
  harness::bench::add("k7", prepare(kK7), 62.671);
  harness::bench::add("shuffle", prepare(kShuffle));
  return true;
}();

}  // namespace

int run_atomic(const harness::Case& c) { return run(c, kAtomic); }
int run_k1(const harness::Case& c) { return run(c, kK1); }
int run_k2(const harness::Case& c) { return run(c, kK2); }
int run_k3(const harness::Case& c) { return run(c, kK3); }
int run_k4(const harness::Case& c) { return run(c, kK4); }
int run_k5(const harness::Case& c) { return run(c, kK5); }
int run_k6(const harness::Case& c) { return run(c, kK6); }
int run_k7(const harness::Case& c) { return run(c, kK7); }
int run_shuffle(const harness::Case& c) { return run(c, kShuffle); }

// GPU benchmark support for a puzzle's driver: `pNN_gpu --bench` times every variant the driver
// registers, next to a library baseline (e.g. CUB) and a device-to-device copy of the same
// bytes, all in one process. The harness does the timing, the driver only says how to run one
// variant at one size. Puzzle-independent; scripts/puzzlelib/bench.py reads the output.
//
// A driver registers its benchmark at namespace scope, e.g.
//
//   static const bool registered = [] {
//     harness::bench::Settings s;
//     s.base = "k1";                              // cumulative speedups are relative to it
//     s.baseline_name = "cub";                    // the library row, and its preparation
//     s.baseline = [](const harness::Case& c) { return ...; };
//     harness::bench::configure(s);
//     harness::bench::add("k1", [](const harness::Case& c) { return ...; }, 2.083);
//     return true;
//   }();
//
// For each size, the harness asks each variant for a Job with Case{variant, n, tpb, seed}, runs
// it once and validates it (a wrong result is reported, never timed), runs `warmup` more times,
// then `runs` timed runs, each between two CUDA events on the default stream; the L2 cache is
// flushed before each timed run while the input is smaller than 4x the L2 cache. It reports the
// median, validates again, and moves on. Jobs are destroyed right after their row, so a driver
// can hold its buffers in shared_ptrs captured by the lambdas.
//
// Output (stdout), after a `BENCH {"type": "device", ...}` header: one `BENCH {"type": "row",
// ...}` line per measurement as soon as it is done, and a readable table per size. On the CPU
// simulator --bench explains that it needs a GPU and exits 2. Exit codes: 0 done (wrong results
// included), 2 usage, 4 a CUDA error (`BENCH {"type": "abort", ...}` names the variant; after a
// fault the GPU context is unusable, so the rest needs a new process).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/harness.h"

namespace harness {
namespace bench {

// One operation at one size, prepared (buffers allocated, input uploaded) by the driver.
struct Job {
  std::function<void()> launch;         // enqueue one complete run on the default stream
  std::function<std::string()> verify;  // after a run: "" when the result is right, else what is wrong
  double bytes = 0;                     // the fewest bytes the operation must move: GB/s = bytes / time
  std::string refused;                  // non-empty: this variant cannot run this case (why); not timed
};

// Makes the job for c.variant at size c.n with block size c.tpb (c.seed seeds the input).
using Prepare = std::function<Job(const Case& c)>;

// A target the results are judged against: `variant` reaches `fraction` of the baseline at size n.
struct Target {
  std::string variant;
  double fraction;
  long long n;
};

struct Settings {
  std::string base;             // the variant cumulative speedups are measured against
  std::string baseline_name;    // short name of the library row, e.g. "cub"
  std::string baseline_label;   // what it is, e.g. "cub::DeviceReduce::Sum"
  Prepare baseline;             // its job (GPU build only; leave empty on the simulator)
  std::string reference_label;  // a column of published GB/s figures, e.g. "G80 2007"; "" for none
  std::string reference_note;   // where those figures come from
  std::vector<Target> targets;
  int element_bytes = 4;        // size of one input element: the copy row copies n of them
};

void configure(Settings s);
// Registers a variant; reference_gbps < 0: no published figure. Variants run in puzzle.json order.
void add(const std::string& variant, Prepare prepare, double reference_gbps = -1);

// ---- library baselines (GPU build; on the simulator cub_available() is false and the others
// must not be called) -----------------------------------------------------------------------
bool cub_available();
// cub::DeviceReduce::Sum over n ints. Call with temp == nullptr to get the temporary storage size.
void cub_sum(void* temp, size_t& temp_bytes, const int* in, int* out, long long n);
// cub::DeviceReduce::Max over n floats.
void cub_max(void* temp, size_t& temp_bytes, const float* in, float* out, long long n);
// cub::DeviceScan::InclusiveSum over n ints.
void cub_inclusive_sum(void* temp, size_t& temp_bytes, const int* in, int* out, long long n);

// ---- used by main() -----------------------------------------------------------------------
struct Options {
  std::vector<long long> sizes;
  std::vector<std::string> variants;  // empty: every registered variant
  int tpb = 256;
  int runs = 30;
  int warmup = 3;
  uint64_t seed = 1;
  std::string flush = "auto";  // auto (inputs under 4x L2), always, never
};
int run(const Options& o);
bool parse_sizes(const char* text, std::vector<long long>* out);  // "4194304,268435456" or "2^22,2^28"

}  // namespace bench
}  // namespace harness

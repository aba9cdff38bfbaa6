// p29 driver: the inputs, the CPU references and one run function per variant of puzzle.json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness/harness.h"

// The launchers in p29.cu.
void p29_multi_stage(const float* d_in, float* d_out, int n);
void p29_double_buffer(const float* d_in, float* d_out, int n, int tpb);

namespace {

constexpr int kPipelineTpb = 256;  // the multi-stage kernel is written for this block size
constexpr int kStage1Threads = 128, kStage2Threads = 128, kBlurRadius = 2;
constexpr int kStencilIterations = 3;
constexpr long long kMaxN = 1LL << 30;  // int indices

// Float results are compared with the reference, which is computed in double: they agree to a
// few float roundings (|got - expected| <= 1e-5 * max(1, |expected|)).
constexpr harness::Tolerance kTolerance{1e-5};

// A case outside what the variant promises: a usage error (exit 2) that says why.
using harness::refuse;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// ---- multi-stage ------------------------------------------------------------------------------

// Tile by tile, exactly the stages of p29.cu's multi_stage_pipeline, in double precision.
std::vector<float> pipeline_reference(const std::vector<float>& in) {
  const long long n = (long long)in.size(), T = kPipelineTpb;
  std::vector<float> out(in.size());
  std::vector<double> p(T), b(T);
  for (long long start = 0; start < n; start += T) {
    for (long long j = 0; j < T; ++j) p[j] = start + j < n ? 1.1 * double(in[start + j]) : 0.0;  // stage 1
    for (long long j = 0; j < T; ++j) {                                                             // stage 2
      double sum = 0;
      int count = 0;
      for (long long k = -kBlurRadius; k <= kBlurRadius; ++k)
        if (j + k >= 0 && j + k < T) sum += p[j + k], ++count;
      b[j] = sum / count;
    }
    for (long long j = 0; j < T && start + j < n; ++j) {  // stage 3
      double f = b[j];
      if (j > 0) f = (f + b[j - 1]) * 0.6;
      if (j < T - 1) f = (f + b[j + 1]) * 0.6;
      out[start + j] = float(f);
    }
  }
  return out;
}

// The course notes print float32 values by rounding to 9 significant digits and then keeping
// the fewest of those digits that still read back as the same float. This prints 3.3996603...
// as 3.3996604 where a nearest-shortest printer says 3.3996603: both strings denote the same
// float. The driver prints the "sample" lines this way so they match the notes' lines.
std::string notes_float(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8e", double(std::fabs(x)));  // d.dddddddde+XX: 9 digits
  const std::string nine = std::string(1, buf[0]) + std::string(buf + 2, 8);
  const int exp9 = std::atoi(std::strchr(buf, 'e') + 1);
  for (int p = 1; p <= 9; ++p) {
    std::string d = nine.substr(0, p);  // round the 9 digits to p, half up
    int exp10 = exp9;
    if (p < 9 && nine[p] >= '5') {
      int i = p - 1;
      while (i >= 0 && d[i] == '9') d[i--] = '0';
      if (i >= 0) ++d[i];
      else d.insert(d.begin(), '1'), d.pop_back(), ++exp10;
    }
    std::string sci = d.substr(0, 1) + "." + (p > 1 ? d.substr(1) : "0") + "e" + std::to_string(exp10);
    if (std::strtof(sci.c_str(), nullptr) != std::fabs(x)) continue;
    while (d.size() > 1 && d.back() == '0') d.pop_back();
    std::string s;
    if (exp10 < -5 || exp10 >= 16) {
      s = sci;
    } else if (exp10 < 0) {
      s = "0." + std::string(-exp10 - 1, '0') + d;
    } else {
      if ((int)d.size() <= exp10 + 1) d += std::string(exp10 + 2 - d.size(), '0');
      s = d.substr(0, exp10 + 1) + "." + d.substr(exp10 + 1);
    }
    return (x < 0 ? "-" : "") + s;
  }
  return buf;  // not reached: 9 digits always read back as the same float
}

void print_sample(const char* what, const std::vector<float>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 3; ++i) s += (i ? " " : "") + notes_float(v[i]);
  std::printf("%s sample: %s\n", what, s.c_str());
}

}  // namespace

int run_multi_stage(const harness::Case& c) {
  if (c.tpb != kPipelineTpb)
    return refuse(c, "the pipeline's stages are written for TPB = 256 (threads 0-127 load, 128-255 blur)");
  if (c.n > kMaxN) return refuse(c, "n must stay below 2^30 (int indices)");
  std::vector<float> in(c.n);
  if (c.show)
    for (long long i = 0; i < c.n; ++i) in[i] = float(i % 10 + i / 100.0);  // the course notes' input
  else
    in = harness::random_floats(c.n, c.seed, 0.0f, 10.0f);
  harness::DeviceArray<float> d_in(in), d_out(c.n);
  p29_multi_stage(d_in.get(), d_out.get(), int(c.n));
  harness::check_kernels("p29_multi_stage");
  const std::vector<float> got = d_out.download();
  if (c.show) {
    print_sample("Input", in);
    print_sample("Output", got);
  }
  const harness::Config cfg = {{"SIZE", c.n},
                               {"TPB", kPipelineTpb},
                               {"blocks", ceil_div(c.n, kPipelineTpb)},
                               {"STAGE1_THREADS", kStage1Threads},
                               {"STAGE2_THREADS", kStage2Threads},
                               {"BLUR_RADIUS", kBlurRadius}};
  return harness::finish(c, cfg, in, got, pipeline_reference(in), kTolerance);
}

// ---- double-buffer ----------------------------------------------------------------------------

// Each tile of tpb elements smoothed on its own, as in p29.cu's stencil_double_buffer: a
// neighbour outside the tile or past the end of the array counts as 0.
std::vector<float> stencil_reference(const std::vector<float>& in, int tpb) {
  const long long n = (long long)in.size();
  std::vector<float> out(in.size());
  for (long long start = 0; start < n; start += tpb) {
    const long long len = std::min<long long>(tpb, n - start);
    std::vector<double> cur(in.begin() + start, in.begin() + start + len), next(len);
    for (int it = 0; it < kStencilIterations; ++it) {
      for (long long i = 0; i < len; ++i) {
        const double left = i > 0 ? cur[i - 1] : 0.0, right = i + 1 < len ? cur[i + 1] : 0.0;
        next[i] = 0.25 * left + 0.5 * cur[i] + 0.25 * right;
      }
      cur.swap(next);
    }
    for (long long i = 0; i < len; ++i) out[start + i] = float(cur[i]);
  }
  return out;
}

int run_double_buffer(const harness::Case& c) {
  if (c.n > kMaxN) return refuse(c, "n must stay below 2^30 (int indices)");
  std::vector<float> in(c.n, 0.0f);
  if (c.show) {
    // Two spikes of 64: one in the middle of tile 0, one on the left edge of tile 1.
    if (c.n > 4) in[4] = 64;
    if (c.n > c.tpb) in[c.tpb] = 64;
  } else {
    in = harness::random_floats(c.n, c.seed, -10.0f, 10.0f);
  }
  harness::DeviceArray<float> d_in(in), d_out(c.n);
  p29_double_buffer(d_in.get(), d_out.get(), int(c.n), c.tpb);
  harness::check_kernels("p29_double_buffer");
  const harness::Config cfg = {
      {"SIZE", c.n}, {"TPB", c.tpb}, {"blocks", ceil_div(c.n, c.tpb)}, {"iterations", kStencilIterations}};
  return harness::finish(c, cfg, in, d_out.download(), stencil_reference(in, c.tpb), kTolerance);
}

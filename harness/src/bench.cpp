// `--bench`: times the variants a driver registers (harness/include/harness/bench.h), next to a
// library baseline and a device-to-device copy, with CUDA events. GPU only: the simulator build
// explains that and exits 2.
//
// Compiled with -DHARNESS_BENCH_ON_SIMULATOR, the simulator build runs the GPU code path instead
// (no L2 flush, no CUB, meaningless times): a way to test this file on a machine without a GPU.
#include "harness/bench.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace harness {
namespace bench {

namespace {

struct Entry {
  std::string name;
  Prepare prepare;
  double reference = -1;
};

struct Registry {
  Settings settings;
  std::vector<Entry> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

void configure(Settings s) { registry().settings = std::move(s); }

void add(const std::string& variant, Prepare prepare, double reference_gbps) {
  registry().entries.push_back(Entry{variant, std::move(prepare), reference_gbps});
}

bool parse_sizes(const char* text, std::vector<long long>* out) {
  out->clear();
  std::string s = text ? text : "";
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    long long v = 0;
    char* end = nullptr;
    if (item.size() > 2 && item.compare(0, 2, "2^") == 0) {
      long long k = std::strtoll(item.c_str() + 2, &end, 10);
      if (*end || k < 0 || k > 30) return false;
      v = 1LL << k;
    } else {
      v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end) return false;
    }
    if (v < 1 || v > (1LL << 30)) return false;
    out->push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return !out->empty();
}

#ifdef CUDASIM
bool cub_available() { return false; }
static void no_cub() {
  std::fprintf(stderr, "error: CUB is not available on the CPU simulator\n");
  std::exit(2);
}
void cub_sum(void*, size_t&, const int*, int*, long long) { no_cub(); }
void cub_max(void*, size_t&, const float*, float*, long long) { no_cub(); }
void cub_inclusive_sum(void*, size_t&, const int*, int*, long long) { no_cub(); }
#endif

#if defined(CUDASIM) && !defined(HARNESS_BENCH_ON_SIMULATOR)

int run(const Options&) {
  std::fprintf(stderr,
               "error: --bench measures time on an NVIDIA GPU, and this is %s's CPU simulator build, whose timings say\n"
               "nothing about a GPU. On a machine with a GPU and the CUDA toolkit:\n"
               "  python3 scripts/puzzle.py bench %s\n",
               kPuzzle.name, kPuzzle.name);
  return 2;
}

#else  // the GPU build

namespace detail {
#ifdef CUDASIM
void flush_l2(const int*, size_t, int*) {}
#else
void flush_l2(const int* buf, size_t n, int* sink);  // bench_gpu.cu: reads buf, so the L2 holds none of the input
#endif
}  // namespace detail

namespace {

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') o += '\\', o += ch;
    else if (c == '\n') o += "\\n";
    else if (c == '\t') o += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else o += ch;
  }
  return o + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

const double kNaN = std::nan("");

struct Row {
  std::string variant, kind, status = "ok", message;
  long long n = 0;
  double ms = kNaN, ms_min = kNaN, ms_max = kNaN, bytes = 0, gbps = kNaN, reference = -1;
  int runs = 0;
};

// A CUDA error after a launch. Sets *dead when the context cannot be used any more (a fault).
bool failed(const char* when, std::string* why, bool* dead) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return false;
  *why = std::string(when) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  cudaGetLastError();
  *dead = cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess;
  return true;
}

class Events {
 public:
  Events() {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
  }
  ~Events() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

struct Flusher {
  explicit Flusher(size_t l2_bytes) {
    n = std::max<size_t>(2 * l2_bytes / sizeof(int), 1 << 20);
    if (cudaMalloc(&buf, n * sizeof(int)) != cudaSuccess || cudaMalloc(&sink, 4096 * sizeof(int)) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
      return;
    }
    cudaMemset(buf, 0, n * sizeof(int));
    cudaDeviceSynchronize();
  }
  ~Flusher() {
    cudaFree(buf);
    cudaFree(sink);
  }
  void operator()() {
    if (n) detail::flush_l2(buf, n, sink);
  }
  int* buf = nullptr;
  int* sink = nullptr;
  size_t n = 0;
};

// Validates, warms up, times. Returns false when the GPU context is gone.
bool measure(Job& job, const Options& o, bool flush, Flusher& flusher, Row* r) {
  r->bytes = job.bytes;
  if (!job.refused.empty()) {
    r->status = "refused";
    r->message = job.refused;
    return true;
  }
  bool dead = false;
  std::string why;
  job.launch();
  if (failed("first run", &why, &dead)) {
    r->status = "error";
    r->message = why;
    return !dead;
  }
  std::string bad = job.verify ? job.verify() : "";
  if (!bad.empty()) {
    r->status = "wrong";
    r->message = bad;
    return true;
  }
  for (int w = 0; w < o.warmup; ++w) job.launch();
  if (failed("warm-up", &why, &dead)) {
    r->status = "error";
    r->message = why;
    return !dead;
  }
  Events ev;
  std::vector<float> ms;
  for (int i = 0; i < o.runs; ++i) {
    if (flush) flusher();
    cudaEventRecord(ev.a_);
    job.launch();
    cudaEventRecord(ev.b_);
    cudaEventSynchronize(ev.b_);
    float t = 0;
    cudaEventElapsedTime(&t, ev.a_, ev.b_);
    ms.push_back(t);
  }
  if (failed("timed runs", &why, &dead)) {
    r->status = "error";
    r->message = why;
    return !dead;
  }
  bad = job.verify ? job.verify() : "";
  if (!bad.empty()) {
    r->status = "wrong";
    r->message = "right on the first run, wrong after the timed runs: " + bad;
    return true;
  }
  std::sort(ms.begin(), ms.end());
  const size_t k = ms.size();
  r->runs = int(k);
  r->ms = k % 2 ? ms[k / 2] : 0.5 * (double(ms[k / 2 - 1]) + double(ms[k / 2]));
  r->ms_min = ms.front();
  r->ms_max = ms.back();
  r->gbps = job.bytes / (r->ms * 1e-3) / 1e9;
  return true;
}

void emit(const Row& r, int tpb, bool flushed) {
  std::printf("BENCH {\"type\": \"row\", \"puzzle\": %s, \"variant\": %s, \"kind\": %s, \"n\": %lld, \"tpb\": %d, "
              "\"status\": %s, \"ms\": %s, \"ms_min\": %s, \"ms_max\": %s, \"runs\": %d, \"bytes\": %s, \"gbps\": %s, "
              "\"reference_gbps\": %s, \"l2_flushed\": %s, \"message\": %s}\n",
              json_string(kPuzzle.name).c_str(), json_string(r.variant).c_str(), json_string(r.kind).c_str(), r.n, tpb,
              json_string(r.status).c_str(), json_number(r.ms).c_str(), json_number(r.ms_min).c_str(),
              json_number(r.ms_max).c_str(), r.runs, json_number(r.bytes).c_str(), json_number(r.gbps).c_str(),
              r.reference >= 0 ? json_number(r.reference).c_str() : "null", flushed ? "true" : "false",
              json_string(r.message).c_str());
  std::fflush(stdout);
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

// The readable table of one size: one line per row, llm.c dev/cuda style.
void print_table(const std::vector<Row>& rows, const Settings& s) {
  const Row* copy = nullptr;
  const Row* lib = nullptr;
  const Row* base = nullptr;
  for (auto& r : rows) {
    if (r.status != "ok") continue;
    if (r.kind == "copy") copy = &r;
    if (r.kind == "baseline") lib = &r;
    if (r.kind == "variant" && r.variant == s.base) base = &r;
  }
  const Row* prev = nullptr;
  for (auto& r : rows) {
    std::printf("%-9s |", r.variant.c_str());
    if (r.status != "ok") {
      const char* what = r.status == "wrong" ? "wrong result, not timed" : r.status == "refused" ? "not run" : "CUDA error";
      std::printf(" %s: %s\n", what, r.message.c_str());
      continue;
    }
    std::printf(" %8.4f ms | %7.1f GB/s", r.ms, r.gbps);
    if (r.kind == "copy") {
      std::printf(" (read + write)\n");
      continue;
    }
    if (r.kind == "variant") {
      if (prev) std::printf(" | step %6.2fx", prev->ms / r.ms);
      else std::printf(" | step     - ");
      prev = &r;
    }
    if (base) std::printf(" | vs %s %6.2fx", s.base.c_str(), base->ms / r.ms);
    if (lib && r.kind == "variant") std::printf(" | %6.1f%% of %s", 100.0 * lib->ms / r.ms, s.baseline_name.c_str());
    if (copy) std::printf(" | %6.1f%% of copy", 100.0 * r.gbps / copy->gbps);
    if (r.reference >= 0) std::printf(" | %s %.3f GB/s", s.reference_label.c_str(), r.reference);
    std::printf("\n");
  }
  std::fflush(stdout);
}

Job copy_job(double bytes) {
  struct Buffers {
    void* src = nullptr;
    void* dst = nullptr;
    ~Buffers() {
      cudaFree(src);
      cudaFree(dst);
    }
  };
  auto b = std::make_shared<Buffers>();
  Job j;
  if (cudaMalloc(&b->src, size_t(bytes)) != cudaSuccess || cudaMalloc(&b->dst, size_t(bytes)) != cudaSuccess) {
    cudaGetLastError();
    j.refused = "not enough GPU memory for two buffers of " + mib(bytes);
    return j;
  }
  cudaMemset(b->src, 1, size_t(bytes));
  j.launch = [b, bytes] { cudaMemcpyAsync(b->dst, b->src, size_t(bytes), cudaMemcpyDeviceToDevice); };
  j.bytes = 2 * bytes;  // every byte is read once and written once
  return j;
}

}  // namespace

int run(const Options& o) {
  Registry& reg = registry();
  const Settings& s = reg.settings;
  if (reg.entries.empty()) {
    std::fprintf(stderr, "error: the %s driver registers no benchmark (see harness/include/harness/bench.h)\n", kPuzzle.name);
    return 2;
  }
  // Variants in puzzle.json order; --variants picks some.
  std::vector<const Entry*> chosen;
  for (auto& v : o.variants) {
    bool known = false;
    for (auto& e : reg.entries) known = known || e.name == v;
    if (!known) {
      std::fprintf(stderr, "error: --variants: %s has no benchmark for variant '%s'\n", kPuzzle.name, v.c_str());
      return 2;
    }
  }
  for (auto& pv : kPuzzle.variants)
    for (auto& e : reg.entries)
      if (e.name == pv.name && (o.variants.empty() || std::find(o.variants.begin(), o.variants.end(), e.name) != o.variants.end()))
        chosen.push_back(&e);

  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    std::fprintf(stderr, "error: no CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 4;
  }
  int runtime = 0, driver = 0;
#ifndef CUDASIM
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
#endif
  std::string targets = "[";
  for (auto& t : s.targets)
    targets += std::string(targets.size() > 1 ? ", " : "") + "{\"variant\": " + json_string(t.variant) +
               ", \"fraction\": " + json_number(t.fraction) + ", \"n\": " + std::to_string(t.n) + "}";
  targets += "]";
  std::string sizes = "[";
  for (auto n : o.sizes) sizes += std::string(sizes.size() > 1 ? ", " : "") + std::to_string(n);
  sizes += "]";
  std::printf("BENCH {\"type\": \"device\", \"puzzle\": %s, \"name\": %s, \"sm\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, "
              "\"memory_bytes\": %zu, \"cuda_runtime\": %d, \"cuda_driver\": %d, \"tpb\": %d, \"runs\": %d, \"warmup\": %d, "
              "\"sizes\": %s, \"flush\": %s, \"timer\": \"cudaEvent\", \"statistic\": \"median\", \"base\": %s, "
              "\"baseline\": %s, \"baseline_label\": %s, \"reference_label\": %s, \"reference_note\": %s, \"targets\": %s, \"element_bytes\": %d}\n",
              json_string(kPuzzle.name).c_str(), json_string(p.name).c_str(), p.major, p.minor, p.multiProcessorCount,
              p.l2CacheSize, p.totalGlobalMem, runtime, driver, o.tpb, o.runs, o.warmup, sizes.c_str(),
              json_string(o.flush).c_str(), json_string(s.base).c_str(), json_string(s.baseline_name).c_str(),
              json_string(s.baseline_label).c_str(), json_string(s.reference_label).c_str(),
              json_string(s.reference_note).c_str(), targets.c_str(), s.element_bytes);
  std::printf("%s benchmark on %s (sm_%d%d, %d SMs, %s L2): median of %d timed runs after %d warm-up runs, CUDA events\n",
              kPuzzle.name, p.name, p.major, p.minor, p.multiProcessorCount, mib(p.l2CacheSize).c_str(), o.runs, o.warmup);
  std::fflush(stdout);

  Flusher flusher(size_t(p.l2CacheSize));
  for (long long n : o.sizes) {
    Case c;
    c.n = n;
    c.tpb = o.tpb;
    c.seed = o.seed;
    const double input_bytes = double(n) * s.element_bytes;
    const bool flush = o.flush == "always" || (o.flush == "auto" && input_bytes < 4.0 * p.l2CacheSize);
    std::printf("\n%s, n = %lld (%s of input), tpb %d, %s\n", kPuzzle.name, n, mib(input_bytes).c_str(), o.tpb,
                flush ? "L2 flushed before every timed run" : "L2 not flushed (the input is over 4x the L2)");
    std::fflush(stdout);
    std::vector<Row> rows;
    auto one = [&](const std::string& name, const char* kind, const Prepare& prepare, double reference) -> bool {
      std::fprintf(stderr, "timing %s at n = %lld ...\n", name.c_str(), n);
      std::fflush(stderr);
      Row r;
      r.variant = name;
      r.kind = kind;
      r.n = n;
      r.reference = reference;
      bool alive = true;
      {
        c.variant = name;
        Job job = prepare(c);
        alive = measure(job, o, flush, flusher, &r);
      }  // the job's buffers are freed here
      rows.push_back(r);
      emit(r, o.tpb, flush);
      if (!alive) {
        std::printf("BENCH {\"type\": \"abort\", \"variant\": %s, \"n\": %lld, \"message\": %s}\n", json_string(name).c_str(), n,
                    json_string(r.message).c_str());
        print_table(rows, s);
        std::fprintf(stderr, "error: %s at n = %lld: %s; the GPU context is unusable, stopping\n", name.c_str(), n,
                     r.message.c_str());
      }
      return alive;
    };
    if (!one("copy", "copy", [&](const Case&) { return copy_job(input_bytes); }, -1)) return 4;
    if (s.baseline && !one(s.baseline_name, "baseline", s.baseline, -1)) return 4;
    for (const Entry* e : chosen)
      if (!one(e->name, "variant", e->prepare, e->reference)) return 4;
    std::printf("\n");
    print_table(rows, s);
  }
  return 0;
}

#endif  // the GPU build

}  // namespace bench
}  // namespace harness

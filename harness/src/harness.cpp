// The driver binary's main(), inputs and verdict printing. See docs/architecture.md for the
// command line and the RESULT line that scripts/puzzle.py reads.
#include "harness/harness.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include "backend.h"
#include "harness/bench.h"

namespace harness {

static const Case* g_case = nullptr;  // for the RESULT line of a run that ends abruptly

static std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') r += '\\', r += ch;
    else if ((unsigned char)ch < 0x20) r += ' ';
    else r += ch;
  }
  return r + "\"";
}

std::string diagnosis_json(const Diagnosis& d) {
  return d.record.empty() ? "{\"kind\": " + json_string(d.kind) + "}" : d.record;
}

static void print_result(const char* verdict, long long mismatches, const Diagnosis* d = nullptr,
                         const std::string& origin = "") {
  std::fflush(stderr);
  const Case& c = *g_case;
  std::printf("RESULT {\"verdict\": \"%s\", \"puzzle\": \"%s\", \"variant\": \"%s\", \"n\": %lld, \"tpb\": %d, \"seed\": %" PRIu64
              ", \"show\": %s, \"mismatches\": %lld%s%s}\n",
              verdict, kPuzzle.name, c.variant.c_str(), c.n, c.tpb, c.seed, c.show ? "true" : "false", mismatches,
              d ? (", \"diagnosis\": " + diagnosis_json(*d)).c_str() : "",
              origin.empty() ? "" : (", \"origin\": " + origin).c_str());
  std::fflush(stdout);
}

// ---- where the first wrong element came from ---------------------------------------------------
// The instrumentation sees loads and stores, not data flow, and recording every read of every run
// would slow every case down. So a case whose answer is wrong runs a second time, quietly, on the
// checked schedule with the simulator's watch on (backend::watch_begin), and the RESULT line of the
// first run carries, as data, the write that set the first wrong element and the writes it was
// computed from ("origin").
static struct {
  bool want = false;   // the first run failed, and its first wrong element came from a device download
  bool rerun = false;  // the quiet rerun is under way
  long long mismatches = 0;
  size_t index = 0;
  std::string got, expected;
  std::string nodes;   // backend::watch_origin_json of the rerun ("" unknown)
  int saved_out = -1, saved_err = -1;
} g_origin;

static void quiet(bool on) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (on) {
    g_origin.saved_out = dup(1);
    g_origin.saved_err = dup(2);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2), close(null);
  } else if (g_origin.saved_out >= 0) {
    dup2(g_origin.saved_out, 1), dup2(g_origin.saved_err, 2);
    close(g_origin.saved_out), close(g_origin.saved_err);
    g_origin.saved_out = g_origin.saved_err = -1;
  }
}

static std::string origin_json() {
  return "{\"index\": " + std::to_string(g_origin.index) + ", \"got\": " + json_string(g_origin.got) +
         ", \"expected\": " + json_string(g_origin.expected) + ", \"nodes\": " +
         (g_origin.nodes.empty() ? std::string("[]") : g_origin.nodes) + "}";
}

static void on_fatal(int code, const Diagnosis& d) {
  if (g_origin.rerun) {  // the rerun of a wrong answer cannot end otherwise; if it does, the first run's verdict stands
    quiet(false);
    print_result("fail", g_origin.mismatches);
    std::_Exit(1);
  }
  // Under `grade` the checker never reads this process's output: the diagnosis goes to it on the
  // output channel, to explain the exit code.
  if (detail::route() == detail::Route::Send) detail::send_diagnosis(d);
  print_result(code == 3 ? "race" : "error", -1, &d);
}

// ---- inputs ---------------------------------------------------------------------------------

static uint64_t next(uint64_t& s) {  // splitmix64: the same stream on every platform
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<int> iota_ints(size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = int(i);
  return v;
}

std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi) {
  std::vector<int> v(n);
  uint64_t s = seed;
  uint64_t span = uint64_t(int64_t(hi) - int64_t(lo) + 1);
  for (size_t i = 0; i < n; ++i) v[i] = int(int64_t(lo) + int64_t(next(s) % span));
  return v;
}

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  uint64_t s = seed;
  for (size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * float(double(next(s) >> 11) * (1.0 / 9007199254740992.0));
  return v;
}

// ---- prose for the learner (harness.h, Say) ---------------------------------------------------

bool say_as_data() {
  static const bool data = [] {
    const char* v = std::getenv("PUZZLES_DRIVER_TEXT");
    return v && std::strcmp(v, "data") == 0;
  }();
  return data;
}

Say::Say(const char* key, const char* text) : key_(key), text_(text) {}

Say& Say::fact(const char* name, long long value) {
  facts_.push_back({name, std::to_string(value), std::to_string(value)});
  return *this;
}

Say& Say::fact(const char* name, const std::string& value) {
  facts_.push_back({name, value, json_string(value)});
  return *this;
}

Say& Say::fact(const char* name, const Say& phrase) {
  facts_.push_back({name, phrase.english(), phrase.json()});
  return *this;
}

std::string Say::english() const {
  std::string out;
  for (size_t i = 0; i < text_.size();) {
    const size_t close = text_[i] == '{' ? text_.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      const std::string name = text_.substr(i + 1, close - i - 1);
      auto f = std::find_if(facts_.begin(), facts_.end(), [&](const Fact& x) { return x.name == name; });
      if (f != facts_.end()) {
        out += f->english;
        i = close + 1;
        continue;
      }
    }
    out += text_[i++];
  }
  return out;
}

std::string Say::json() const {
  std::string s = "{\"key\": " + json_string(key_) + ", \"text\": " + json_string(text_);
  for (const Fact& f : facts_) s += ", " + json_string(f.name) + ": " + f.json;
  return s + "}";
}

void Say::print(std::FILE* to) const {
  std::fprintf(to, "%s%s\n", say_as_data() ? "SAY " : "", (say_as_data() ? json() : english()).c_str());
}

int refuse(const Case& c, const char* why) {
  std::fflush(stdout);
  Say("refused", "error: {puzzle} --{variant} with n = {n}, tpb = {tpb}: {why}")
      .fact("puzzle", std::string(kPuzzle.name))
      .fact("variant", c.variant)
      .fact("n", c.n)
      .fact("tpb", (long long)c.tpb)
      .fact("why", Say("refused_why", why))
      .print(stderr);
  return 2;
}

// ---- errors ---------------------------------------------------------------------------------

// A failed CUDA call as data, for the CLI's reason (scripts/puzzlelib/explain.py reads it; the
// `error:` line above it is for a person running the binary): one line, `HARNESS_ERROR {json}`, with
// "case" ("call": a checked call, "kernels": a launch or a kernel), "call" (the API function, the
// first word of `what`), "what", "site" (call only) and the CUDA error's "error" (its name).
static void report_failed_call(const char* kase, const char* what, const char* file, int line, cudaError_t e) {
  const std::string w = what ? what : "";
  std::string json = "{\"case\": " + json_string(kase) + ", \"call\": " + json_string(w.substr(0, w.find(' '))) +
                     ", \"what\": " + json_string(w) + ", \"error\": " + json_string(cudaGetErrorName(e));
  if (file) json += ", \"site\": " + json_string(std::string(file) + ":" + std::to_string(line));
  std::fflush(stderr);
  std::printf("HARNESS_ERROR %s}\n", json.c_str());
  std::fflush(stdout);
}

void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "error: %s failed at %s:%d: %s (%s)\n", what, file, line, cudaGetErrorString(e), cudaGetErrorName(e));
  report_failed_call("call", what, file, line, e);
  print_result("error", -1);
  std::exit(4);
}

void check_kernels(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "error: %s: a kernel launch or a kernel failed: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
  if (e == cudaErrorInvalidConfiguration)
    std::fprintf(stderr, "  Check the <<<blocks, threads, shared bytes>>> of each launch: at most 1024 threads per block, at "
                         "least one block, at most 48 KiB of shared memory.\n");
  report_failed_call("kernels", what, nullptr, 0, e);
  print_result("error", -1);
  std::exit(4);
}

// ---- printing -------------------------------------------------------------------------------

namespace detail {

struct Downloaded {
  const void* device;
  const void* host;
  size_t bytes;
};
static std::vector<Downloaded> g_downloaded;

void remember_download(const void* device, const void* host, size_t bytes) {
  g_downloaded.push_back({device, host, bytes});
  if (g_downloaded.size() > 64) g_downloaded.erase(g_downloaded.begin());
}

// The device address a host element was downloaded from, or null.
static const void* device_of(const void* host) {
  const char* h = static_cast<const char*>(host);
  for (auto it = g_downloaded.rbegin(); it != g_downloaded.rend(); ++it) {
    const char* lo = static_cast<const char*>(it->host);
    if (h >= lo && h < lo + it->bytes) return static_cast<const char*>(it->device) + (h - lo);
  }
  return nullptr;
}

DriverCopy::DriverCopy() : was_forbidden_(backend::forbid_device_to_host_copies(false)) {}
DriverCopy::~DriverCopy() { backend::forbid_device_to_host_copies(was_forbidden_); }

std::string format_value(long long v) { return std::to_string(v); }

std::string format_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  std::string s(buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 3 -> 3.0, so floats read as floats
  return s;
}

static std::string format_array(size_t n, std::string (*at)(const void*, size_t), const void* v) {
  const size_t head = 16, tail = 4;
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    if (n > head + tail + 1 && i == head) {
      s += "... " + std::to_string(n - head - tail) + " more ...";
      i = n - tail - 1;
      continue;
    }
    s += at(v, i);
  }
  return s + "]";
}

static std::string config_str(const Case& c, const Config& cfg) {
  std::string s;
  for (auto& kv : cfg) s += (s.empty() ? "" : ", ") + kv.first + " = " + std::to_string(kv.second);
  (void)c;
  return s;
}

// Elements [from, from + count) of an array, with how many were left out on either side, so a
// long failing case shows the neighbourhood of its first mismatch.
static std::string format_window(size_t n, std::string (*at)(const void*, size_t), const void* v, size_t from, size_t count) {
  if (from >= n) from = 0;
  const size_t to = std::min(n, from + count);
  std::string s = "[";
  if (from) s += "... " + std::to_string(from) + " before ..., ";
  for (size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + at(v, i);
  if (to < n) s += ", ... " + std::to_string(n - to) + " more ...";
  return s + "]";
}

// Values that are the simulator's fill of memory nobody wrote (the byte 0xCD in cudaMalloc
// buffers, shared memory and inactive shuffle lanes), as the printed text of each type, so a
// learner reading "got -842150451" learns what it is. Sums of a few such values (a reduction
// that added uninitialized elements) are named too.
static std::optional<Say> uninit_note(const std::string& text) {
  static const std::pair<const char*, Say> kFill[] = {
      {"-842150451", Say("fill_read_as", "the 0xCD fill read as an int")},
      {"3452816845", Say("fill_read_as", "the 0xCD fill read as an unsigned int")},
      {"-4.316021e+08", Say("fill_read_as", "the 0xCD fill read as a float")},
      {"-6.277439e+66", Say("fill_read_as", "the 0xCD fill read as a double")},
      {"-3617008641903833651", Say("fill_read_as", "the 0xCD fill read as a long long")},
  };
  for (auto& f : kFill)
    if (text == f.first) return f.second;
  if (text.find_first_of(".eEn") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  // Only large values: a sum of k fills can also land near 0 (51 x 0xCDCDCDCD = -41 mod 2^32).
  if (*end || v < INT32_MIN || v > INT32_MAX || (v > -(1 << 24) && v < (1 << 24))) return std::nullopt;
  // v = k * 0xCDCDCDCD + r (mod 2^32) with the smallest k that leaves a small rest r: a value
  // computed from k elements nobody wrote.
  for (uint32_t k = 1; k <= 64; ++k) {
    const int32_t r = int32_t(uint32_t(int32_t(v)) - k * 0xCDCDCDCDu);
    if (r > -65536 && r < 65536) {
      const std::string rest = (r < 0 ? "- " : "+ ") + std::to_string(r < 0 ? -(long long)r : (long long)r);
      if (k == 1) return Say("fill_computed", "the 0xCD fill {rest}, computed from memory nobody wrote").fact("rest", rest);
      return Say("fill_sum", "{count} x the 0xCD fill {rest}, a sum of memory nobody wrote")
          .fact("count", (long long)k)
          .fact("rest", rest);
    }
  }
  return std::nullopt;
}

int finish_impl(const Case& c, const Config& cfg, size_t n_in, size_t n_out, std::string (*in_at)(const void*, size_t), const void* in,
                std::string (*out_at)(const void*, size_t), const void* got, const void* expected,
                bool (*equal)(const void*, const void*, size_t, double), double tol, const void* got_data,
                size_t element_size, bool is_float) {
  size_t got_n = static_cast<const std::vector<char>*>(got)->size();  // only the size is read
  (void)got_n;
  size_t mismatches = 0, first = n_out;
  for (size_t i = 0; i < n_out; ++i)
    if (!equal(got, expected, i, tol)) {
      if (first == n_out) first = i;
      ++mismatches;
    }
  const void* first_device =
      mismatches && got_data ? device_of(static_cast<const char*>(got_data) + first * element_size) : nullptr;
  if (g_origin.rerun) {  // the quiet rerun: only where the first wrong element came from
    if (first_device) g_origin.nodes = backend::watch_origin_json(first_device, is_float);
    return mismatches ? 1 : 0;
  }
  if (c.show) {
    std::printf("config:   %s\n", config_str(c, cfg).c_str());
    std::printf("input:    %s\n", format_array(n_in, in_at, in).c_str());
    std::printf("out:      %s\n", format_array(n_out, out_at, got).c_str());
    std::printf("expected: %s\n", format_array(n_out, out_at, expected).c_str());
  } else {
    std::printf("case: %s, seed = %" PRIu64 "\n", config_str(c, cfg).c_str(), c.seed);
  }
  if (mismatches) {
    Say("mismatch", "mismatch: {count} of {total} outputs differ; first at index {first}")
        .fact("count", (long long)mismatches)
        .fact("total", (long long)n_out)
        .fact("first", (long long)first)
        .print();
    size_t shown = 0;
    std::vector<std::string> named;  // each fill value is named once, on its first line
    for (size_t i = first; i < n_out && shown < 8; ++i) {
      if (equal(got, expected, i, tol)) continue;
      const std::string g = out_at(got, i);
      std::optional<Say> note = uninit_note(g);
      if (note) {
        if (std::find(named.begin(), named.end(), g) != named.end()) note.reset();
        else named.push_back(g);
      }
      Say line = note ? Say("mismatch_at", "  [{index}] expected {expected}, got {got} (uninitialized: {fill})")
                      : Say("mismatch_at", "  [{index}] expected {expected}, got {got}");
      line.fact("index", (long long)i).fact("expected", out_at(expected, i)).fact("got", g);
      if (note) line.fact("fill", *note);
      line.print();
      ++shown;
    }
    if (!c.show) {  // the failing case's arrays, shortened around the first mismatch
      const size_t from = first > 4 ? first - 4 : 0, count = 16;
      std::printf("input:    %s\n", format_window(n_in, in_at, in, n_in == n_out ? from : 0, count).c_str());
      std::printf("out:      %s\n", format_window(n_out, out_at, got, from, count).c_str());
      std::printf("expected: %s\n", format_window(n_out, out_at, expected, from, count).c_str());
    }
    if (!named.empty())
      Say("uninitialized",
          "note: memory from cudaMalloc and __shared__ arrays starts as garbage (the simulator fills it with the byte "
          "0xCD, as above): that output was never written, or was computed from memory nobody wrote.")
          .print();
  }
  if (mismatches && first_device && route() == Route::Local && backend::watch_supported()) {
    g_origin.want = true;  // main() reruns the case and prints RESULT with the origin
    g_origin.mismatches = (long long)mismatches;
    g_origin.index = first;
    g_origin.got = out_at(got, first);
    g_origin.expected = out_at(expected, first);
    return 1;
  }
  print_result(mismatches ? "fail" : "pass", (long long)mismatches);
  return mismatches ? 1 : 0;
}

}  // namespace detail

// ---- main -----------------------------------------------------------------------------------

static int usage(const char* msg) {
  if (msg) std::fprintf(stderr, "error: %s\n", msg);
  std::fprintf(stderr,
               "usage: %s_<backend> --list\n"
               "       %s_<backend> --variant NAME --n N --tpb T (--show | --seed S) [--schedules forward,reverse,random] [--stats]\n"
               "                   [--allow-host-copies]\n"
               "       %s_gpu --bench [--sizes N,N] [--variants A,B] [--tpb T] [--runs R] [--warmup W] [--flush auto|always|never] [--seed S]\n"
               "This is the puzzle's driver; learners run it through scripts/puzzle.py.\n",
               kPuzzle.name, kPuzzle.name, kPuzzle.name);
  return 2;
}

static bool parse_ll(const char* s, long long* out) {
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (!s[0] || *end) return false;
  *out = v;
  return true;
}

}  // namespace harness

int main(int argc, char** argv) {
  using namespace harness;
  static Case c;
  g_case = &c;
  bool allow_host_copies = false;  // the grader accepts host-computed output for this variant
  bool list = false, stats = false, have_n = false, have_tpb = false, have_seed = false, bench_mode = false;
  bench::Options bench_opts;
  bench::parse_sizes("4194304,268435456", &bench_opts.sizes);  // 2^22 (the 2007 paper's size) and 2^28
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        usage((std::string(what) + " needs a value").c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    long long v = 0;
    if (a == "--list") list = true;
    else if (a == "--show") c.show = true;
    else if (a == "--stats") stats = true;
    else if (a == "--allow-host-copies") allow_host_copies = true;
    else if (a == "--variant") c.variant = value("--variant");
    else if (a == "--n") {
      if (!parse_ll(value("--n"), &v) || v < 1) return usage("--n takes a size of at least 1");
      c.n = v, have_n = true;
    } else if (a == "--tpb") {
      if (!parse_ll(value("--tpb"), &v) || v < 1 || v > 1 << 20) return usage("--tpb takes a positive block size");
      c.tpb = int(v), have_tpb = true;
    } else if (a == "--seed") {
      if (!parse_ll(value("--seed"), &v) || v < 0) return usage("--seed takes a non-negative integer");
      c.seed = uint64_t(v), have_seed = true;
    } else if (a == "--bench") {
      bench_mode = true;
    } else if (a == "--sizes") {
      if (!bench::parse_sizes(value("--sizes"), &bench_opts.sizes))
        return usage("--sizes takes a comma-separated list of sizes from 1 to 2^30, e.g. 4194304,2^28");
    } else if (a == "--variants") {
      std::string list = value("--variants");
      bench_opts.variants.clear();
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) bench_opts.variants.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--runs" || a == "--warmup") {
      if (!parse_ll(value(a.c_str()), &v) || v < (a == "--runs" ? 1 : 0) || v > 100000)
        return usage((a + " takes a count").c_str());
      (a == "--runs" ? bench_opts.runs : bench_opts.warmup) = int(v);
    } else if (a == "--flush") {
      bench_opts.flush = value("--flush");
      if (bench_opts.flush != "auto" && bench_opts.flush != "always" && bench_opts.flush != "never")
        return usage("--flush takes auto, always or never");
    } else if (a == "--schedules") {
      if (!backend::set_schedules(value("--schedules")))
        return usage("--schedules takes a list of forward, reverse, random (CPU simulator only)");
    } else if (a == "--help" || a == "-h") {
      usage(nullptr);
      return 0;
    } else {
      return usage(("unknown option " + a).c_str());
    }
  }
  if (list) {
    for (auto& v : kPuzzle.variants) std::printf("%s\n", v.name);
    return 0;
  }
  if (bench_mode) {
    if (have_tpb) bench_opts.tpb = c.tpb;
    if (have_seed) bench_opts.seed = c.seed;
    c.variant = "bench";
    return bench::run(bench_opts);
  }
  const VariantEntry* entry = nullptr;
  for (auto& v : kPuzzle.variants)
    if (c.variant == v.name) entry = &v;
  if (!entry) return usage(c.variant.empty() ? "--variant is required" : ("unknown variant " + c.variant).c_str());
  if (!have_n || !have_tpb) return usage("--n and --tpb are required");
  if (!c.show && !have_seed) return usage("give --show (the deterministic input) or --seed S (a random input)");
  backend::set_seed(c.seed + 1);
  backend::strict_undefined_values();
  backend::check_every_block();  // check and grade judge every block, whatever CUDASIM_SAMPLE says
  backend::on_fatal(on_fatal);
  std::printf("backend:  %s\n", backend::describe().c_str());
  std::fflush(stdout);
  // The variant's driver calls the learner's launcher and downloads the output (DeviceArray): any
  // other copy of device memory to the host is the launcher's, and is refused (host_copy_in_launcher).
  backend::forbid_device_to_host_copies(!allow_host_copies);
  int rc = entry->run(c);
  if (g_origin.want) {
    quiet(true);
    g_origin.rerun = true;
    detail::g_downloaded.clear();
    backend::watch_begin();
    entry->run(c);
    backend::watch_end();
    g_origin.rerun = false;
    quiet(false);
    print_result("fail", g_origin.mismatches, nullptr, origin_json());
  }
  backend::forbid_device_to_host_copies(false);
  if (stats && !backend::stats_json().empty()) std::printf("STATS %s\n", backend::stats_json().c_str());
  return rc;
}

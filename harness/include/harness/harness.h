// Puzzle-independent support for a puzzle's driver: the case to run, inputs, device buffers,
// and the verdict. A driver (puzzles/pNN/driver.cpp) defines one `int run_<variant>(const
// harness::Case&)` per variant declared in puzzle.json; CMake generates the table that maps
// names to those functions, and harness's main() does the rest.
//
// The same driver compiles against the CPU simulator and against the CUDA runtime.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace harness {

struct Case {
  std::string variant;
  long long n = 0;
  int tpb = 0;
  uint64_t seed = 0;
  bool show = false;  // the deterministic show input, printed in full
};

using RunFn = int (*)(const Case&);
struct VariantEntry {
  const char* name;
  RunFn run;
};
struct Puzzle {
  const char* name;
  std::vector<VariantEntry> variants;
};
extern const Puzzle kPuzzle;  // generated from puzzles/pNN/puzzle.json

// ---- inputs (deterministic for a seed on every platform) -----------------------------------
std::vector<int> iota_ints(size_t n);                                         // a[i] = i
std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi);         // uniform in [lo, hi]
std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi);  // uniform in [lo, hi)

// ---- prose for the learner ------------------------------------------------------------------
// A line the driver says to the learner (a note, a line of the mismatch block), as data. Its text
// is an English template with named facts, e.g.
//   harness::Say("p13.inputs", "inputs:   {distribution}").fact("distribution", ...).print();
// Run by hand, the driver prints the English with the facts filled in. Run by scripts/puzzle.py
// (PUZZLES_DRIVER_TEXT=data in the environment), it prints `SAY {"key": ..., "text": ..., facts}`
// instead, and the CLI words the line in the learner's language: the template is the msgid of its
// Korean form in the catalogues (scripts/puzzlelib/driver_text.py). A fact is an integer, a string,
// or another Say (a phrase with its own template). The key names the line for programs.
class Say {
 public:
  Say(const char* key, const char* text);
  Say& fact(const char* name, long long value);
  Say& fact(const char* name, const std::string& value);
  Say& fact(const char* name, const Say& phrase);
  std::string english() const;  // the template, facts filled in
  std::string json() const;     // {"key": ..., "text": ..., facts...}
  void print(std::FILE* to = stdout) const;

 private:
  struct Fact {
    std::string name, english, json;
  };
  std::string key_, text_;
  std::vector<Fact> facts_;
};
bool say_as_data();  // PUZZLES_DRIVER_TEXT=data: Say lines are printed as data
// A case outside what the variant promises (a block size its kernel cannot take, n too large):
// says `error: pNN --VARIANT with n = N, tpb = T: WHY` on stderr (a Say line; WHY, an English
// sentence, is a phrase of its own and the msgid of its Korean form) and returns 2, the driver's
// usage-error exit code.
int refuse(const Case& c, const char* why);

// ---- errors ---------------------------------------------------------------------------------
// A failed CUDA call ends the run with an "error" verdict that names the call and where it was.
void check(cudaError_t e, const char* what, const char* file = __builtin_FILE(), int line = __builtin_LINE());
// Call after the learner's host code returns: reports launch errors and kernel faults.
void check_kernels(const char* what);

// ---- the output channel of a graded run (harness/channel.h) ---------------------------------
namespace detail {
// Local: finish() compares (run, check). Send: the learner's process under `grade` sends its output
// to the checker. Receive: the checker (pNN_checker) compares the output it received.
enum class Route { Local, Send, Receive };
Route route();
void note_download(const void* device, const void* host, size_t bytes);  // what the simulator saw
// The downloads of this case, so that a wrong element can be traced to the device word it came from.
void remember_download(const void* device, const void* host, size_t bytes);
int send_output(const Case& c, const void* data, size_t element_size, size_t count);
// Fills data with the learner's output; ends the process with the verdict when there is none.
void receive_output(const Case& c, void* data, size_t element_size, size_t count);
int conclude(const Case& c, int rc);  // the checker's verdict for a compared output
struct Receiver {
  void (*receive)(const Case& c, void* data, size_t element_size, size_t count);
  int (*conclude)(const Case& c, int rc);
};
void set_receiver(const Receiver* r);  // checker.cpp registers itself
// While a case runs, the simulator refuses copies of device memory to the host: the learner's
// launchers must leave the answer to their kernels, not compute it on the CPU. The driver's own
// downloads of the output lift that for their copy, with one of these.
class DriverCopy {
 public:
  DriverCopy();
  ~DriverCopy();
  DriverCopy(const DriverCopy&) = delete;
  DriverCopy& operator=(const DriverCopy&) = delete;

 private:
  bool was_forbidden_;
};
}  // namespace detail

// A device buffer owned by the driver. Copies in on construction, out with download().
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n, const char* file = __builtin_FILE(), int line = __builtin_LINE()) : n_(n) {
#ifdef CUDASIM
    check(cudaMalloc(&p_, bytes(), file, line), "cudaMalloc", file, line);  // the simulator names the buffer by it
#else
    check(cudaMalloc(&p_, bytes()), "cudaMalloc", file, line);
#endif
  }
  explicit DeviceArray(const std::vector<T>& host, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : DeviceArray(host.size(), file, line) {
    check(cudaMemcpy(p_, host.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to the device", file, line);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p_); }
  T* get() const { return p_; }
  size_t size() const { return n_; }
  std::vector<T> download(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    std::vector<T> h(n_);
    {
      detail::DriverCopy driver_copy;
      check(cudaMemcpy(h.data(), p_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to the host", file, line);
    }
    detail::note_download(p_, h.data(), n_ * sizeof(T));
    return h;
  }

 private:
  size_t bytes() const { return std::max<size_t>(n_, 1) * sizeof(T); }
  T* p_ = nullptr;
  size_t n_;
};

// ---- the verdict ----------------------------------------------------------------------------
// The configuration line printed with the show input, e.g. {{"SIZE", 8}, {"TPB", 8}}.
using Config = std::vector<std::pair<std::string, long long>>;

struct Tolerance {
  double rel = 0;  // 0: exact; otherwise |got - expected| <= rel * max(1, |expected|)
};

namespace detail {
std::string format_value(long long v);
std::string format_value(double v);
int finish_impl(const Case& c, const Config& cfg, size_t n_in, size_t n_out, std::string (*in_at)(const void*, size_t),
                const void* in, std::string (*out_at)(const void*, size_t), const void* got, const void* expected,
                bool (*equal)(const void*, const void*, size_t, double), double tol, const void* got_data = nullptr,
                size_t element_size = 0, bool is_float = false);
template <class T>
std::string at(const void* v, size_t i) {
  const T& x = static_cast<const std::vector<T>*>(v)->at(i);
  if constexpr (std::is_floating_point<T>::value) return format_value(double(x));
  else return format_value((long long)x);
}
template <class T>
bool eq(const void* a, const void* b, size_t i, double tol) {
  const T x = static_cast<const std::vector<T>*>(a)->at(i);
  const T y = static_cast<const std::vector<T>*>(b)->at(i);
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return std::fabs(double(x) - double(y)) <= tol * std::fmax(1.0, std::fabs(double(y)));
  } else {
    (void)tol;
    return x == y;
  }
}
}  // namespace detail

// Compares the device's output with the CPU reference and prints the verdict. In show mode the
// configuration, input, out and expected are printed in full (long arrays are elided in the
// middle); otherwise one line, plus the first mismatches on failure. Returns the exit code.
template <class TI, class TO>
int finish(const Case& c, const Config& cfg, const std::vector<TI>& input, const std::vector<TO>& got,
           const std::vector<TO>& expected, Tolerance tol = {}) {
  // Under `grade` the process that runs the learner's code never compares: it sends its output to
  // the checker, which runs this driver without the learner's code and compares (harness/channel.h).
  const detail::Route route = detail::route();
  if (route == detail::Route::Send) return detail::send_output(c, got.data(), sizeof(TO), got.size());
  if (route == detail::Route::Local)
    return detail::finish_impl(c, cfg, input.size(), expected.size(), &detail::at<TI>, &input, &detail::at<TO>, &got,
                               &expected, &detail::eq<TO>, tol.rel, got.data(), sizeof(TO),
                               std::is_floating_point<TO>::value);
  std::vector<TO> received(expected.size());
  detail::receive_output(c, received.data(), sizeof(TO), received.size());
  const int rc = detail::finish_impl(c, cfg, input.size(), expected.size(), &detail::at<TI>, &input, &detail::at<TO>,
                                     &received, &expected, &detail::eq<TO>, tol.rel);
  return detail::conclude(c, rc);
}

}  // namespace harness

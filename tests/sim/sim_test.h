// Helpers shared by the simulator's Catch2 tests (tests/sim/test_*.cu). The .cu files are
// translated by harness/sim/cu2cpp.py and compiled with cudasim/runtime.h force-included, exactly
// like a learner's file; main.cpp switches kernel errors to exceptions (ErrorMode::Throw).
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "cudasim/control.h"  // the tests set schedules and error modes, as the harness does

namespace simtest {

// A typed device buffer: cudaMalloc<T> (so messages say "N x int"), upload, download.
template <class T>
class Buf {
 public:
  // file/line: where the buffer is made, so that messages name the test's line, not this header's.
  explicit Buf(size_t n, const char* file = __builtin_FILE(), int line = __builtin_LINE()) : n_(n) {
    REQUIRE(cudaMalloc(&p_, n * sizeof(T), file, line) == cudaSuccess);
  }
  explicit Buf(const std::vector<T>& h, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : Buf(h.size(), file, line) {
    upload(h);
  }
  Buf(size_t n, T fill, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : Buf(std::vector<T>(n, fill), file, line) {}
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { cudaFree(p_); }
  T* get() const { return p_; }
  operator T*() const { return p_; }
  size_t size() const { return n_; }
  void upload(const std::vector<T>& h) {
    REQUIRE(h.size() == n_);
    REQUIRE(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    REQUIRE(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

inline std::vector<int> iota(size_t n, int start = 0) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + int(i);
  return v;
}

// Runs f (which launches a kernel) and returns the KernelError it throws; fails the test when
// nothing is thrown.
template <class F>
cudasim::KernelError kernel_error(F&& f) {
  try {
    f();
  } catch (const cudasim::KernelError& e) {
    UNSCOPED_INFO("kernel error (kind " << e.kind << ", code " << e.code << "):\n" << e.message);
    return e;
  }
  FAIL("expected the launch to end with a kernel error, but it succeeded");
  return cudasim::KernelError{};
}

// Restores cudasim::options() (checks, schedules, barrier limit...) when the scope ends, so that a
// test can switch the memory checker off or run one schedule without affecting the others.
// (options().workers only matters before the first launch, which main.cpp has made by then.)
class OptionsGuard {
 public:
  OptionsGuard() : saved_(cudasim::options()) {}
  OptionsGuard(const OptionsGuard&) = delete;
  OptionsGuard& operator=(const OptionsGuard&) = delete;
  ~OptionsGuard() { cudasim::options() = saved_; }

 private:
  cudasim::Options saved_;
};

// Line number of the line of `file` that carries the comment `// <marker>`, so that tests can
// check the file:line a diagnostic names without hard-coding numbers. __FILE__ of a translated
// test is the absolute path of the .cu (cu2cpp.py writes a #line directive).
inline int line_of(const char* file, const std::string& marker) {
  std::ifstream in(file);
  std::string line, want = "// " + marker;
  for (int n = 1; std::getline(in, line); ++n) {
    // The whole marker: "// @bar" does not match a line marked "// @bar2".
    size_t at = line.find(want);
    size_t end = at + want.size();
    if (at != std::string::npos && (end == line.size() || line[end] == ' ')) return n;
  }
  FAIL("marker '" << want << "' not found in " << file);
  return -1;
}
// "path/test_x.cu:42" as the simulator prints a site: relative to the working directory when the
// file lies below it, else absolute.
inline std::string site(const char* file, const std::string& marker) {
  std::string f(file);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) {
    std::string prefix = std::string(cwd) + "/";
    if (f.compare(0, prefix.size(), prefix) == 0) f = f.substr(prefix.size());
  }
  return f + ":" + std::to_string(line_of(file, marker));
}

}  // namespace simtest

#define SITE(marker) ::simtest::site(__FILE__, marker)

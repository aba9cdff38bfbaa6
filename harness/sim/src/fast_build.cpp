// The uninstrumented build of a program: the fast path without the memory checker's calls.
//
// The learner's translated file is compiled with ThreadSanitizer's instrumentation (access.cpp), so
// every load and store of device code calls the simulator, even when nothing checks it
// (CUDASIM_CHECKS=0): a call, a test and a return per access, and the caller keeps its values in
// memory around each call. Where the build made a second executable from the same sources without
// the instrumentation (NAME.fast next to NAME: harness/cmake/Puzzle.cmake for the puzzles'
// solutions, `puzzle.py sim` when it builds with the checks off), a run that needs no
// instrumentation (checks off, no trace, no profile) starts that one instead, before the program's
// own initialisation, with the same arguments, environment and process: the output, the exit status
// and the reports are the same, and the kernels' loads and stores are plain ones. A p14 --complete
// run (2^20 elements) took 0.185 s of kernel time instrumented and 0.153 s uninstrumented; the
// tiled matrix product of bench/sim/matmul_tiled.cu, 2.1 times less.
//
// CUDASIM_FAST_BUILD=0 keeps the instrumented one (a debugger or valgrind that does not follow exec).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "internal.h"

// Defined (weak, so that every translated file of a program may define it) by cudasim/runtime.h
// in a file compiled with CUDASIM_UNINSTRUMENTED: this executable is an uninstrumented build.
extern "C" {
extern const char cudasim_uninstrumented_build __attribute__((weak));
}

namespace cudasim {
namespace detail {

bool uninstrumented_build() { return &cudasim_uninstrumented_build != nullptr; }

// What only the instrumented build can do: the memory checker (on unless CUDASIM_CHECKS is 0 or
// off, as options() reads it), a trace (CUDASIM_TRACE) or a profile (CUDASIM_PROFILE), which see
// the kernels' accesses through the instrumentation.
static bool environment_needs_instrumentation() {
  const char* checks = std::getenv("CUDASIM_CHECKS");
  const bool checked = !(checks && (std::strcmp(checks, "0") == 0 || std::strcmp(checks, "off") == 0));
  const char* trace = std::getenv("CUDASIM_TRACE");
  const char* profile = std::getenv("CUDASIM_PROFILE");
  return checked || (trace && *trace) || (profile && *profile);
}

#if defined(__linux__)
// The running program's arguments, from the kernel (a constructor gets no argv on every C library).
static std::vector<std::string> own_arguments() {
  std::vector<std::string> args;
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return args;
  std::string all;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) all.append(buf, n);
  std::fclose(f);
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  return args;
}

// Priority 101: before the program's own static initialisers, which would otherwise run twice (here
// and in the uninstrumented build), and before anything is printed.
__attribute__((constructor(101))) static void start_uninstrumented_build() {
  if (uninstrumented_build() || environment_needs_instrumentation()) return;
  if (const char* v = std::getenv("CUDASIM_FAST_BUILD"); v && std::strcmp(v, "0") == 0) return;
  char self[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 8);
  if (len <= 0) return;
  const std::string fast = std::string(self, size_t(len)) + ".fast";
  if (access(fast.c_str(), X_OK) != 0) return;
  std::vector<std::string> args = own_arguments();
  if (args.empty()) return;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  execv(fast.c_str(), argv.data());  // returns only when it failed: go on instrumented
}
#endif

// A launch that needs what this build lacks: the options were changed after the start (by the
// program's own code, or the harness's), or the uninstrumented build was run by hand with them on.
void uninstrumented_launch_check(bool observed) {
  if (!uninstrumented_build() || !observed) return;
  std::fprintf(stderr,
               "cudasim: error: this is the uninstrumented build of the program (NAME.fast), which runs kernels only with the "
               "memory checker, traces and profiles off (CUDASIM_CHECKS=0, no CUDASIM_TRACE or CUDASIM_PROFILE); run the "
               "program without .fast, which starts this one by itself when it can.\n");
  std::fflush(stderr);
  std::_Exit(4);
}

}  // namespace detail
}  // namespace cudasim

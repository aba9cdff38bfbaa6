// Device-to-host copies refused while the puzzles' harness runs a case (control.h,
// set_device_to_host_copies_forbidden): a puzzle's answer must be computed by its kernels, and a
// launcher that brings the input to the host can compute it there and copy it back (or have a
// kernel copy it into the output), which compares right and teaches nothing. memory.cpp calls
// device_to_host_copy() from each path that copies device memory into host memory.
#include <atomic>

#include "internal.h"

namespace cudasim {

namespace {
std::atomic<bool> g_forbidden{false};
}

void set_device_to_host_copies_forbidden(bool on) {
  g_forbidden.store(on);
  detail::managed_protection_update();  // managed buffers: closed to host code while forbidden
}
bool device_to_host_copies_forbidden() { return g_forbidden.load(); }

namespace detail {

void device_to_host_copy(size_t bytes, const char* how, const char* file, int line) {
  if (!g_forbidden.load()) return;
  Diagnosis d{Kind::host_copy_in_launcher};
  d.sites.push_back(where(file, line));
  d.detail = how;
  d.facts.set("case", "copy").set("bytes", bytes).set("how", how);
  fatal(d, strf("the launcher copied %zu byte%s of device memory to the host (%s) at %s.\n"
                "  A puzzle's answer must be computed by its kernels: the driver reads the output buffer itself after the "
                "launcher returns, so the launcher has no reason to read device memory, and an answer computed on the CPU "
                "(copied back, or copied into the output by a kernel) does not count.\n"
                "  Remove the copy and compute the result on the device; if one kernel cannot finish it, launch another on "
                "what the first left in device memory. To look at values while debugging, printf from a kernel.",
                bytes, bytes == 1 ? "" : "s", how, where(file, line).c_str()));
}

}  // namespace detail
}  // namespace cudasim

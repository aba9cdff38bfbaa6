#include <cstdio>
#include <string>

#include "backend.h"
#include "cudasim/control.h"

namespace harness {
namespace backend {

std::string describe() {
  const cudasim::Options& o = cudasim::options();
  std::string s = std::string("CPU simulator (") + cudasim::fiber_backend() + " fibers; thread schedules: ";
  for (int i = 0; i < o.schedule_count; ++i) s += std::string(i ? ", " : "") + cudasim::schedule_name(o.schedules[i]);
  return s + ")";
}

bool set_schedules(const char* list) { return cudasim::set_schedules(list); }
void set_seed(unsigned long long seed) { cudasim::options().seed = seed; }
void strict_undefined_values() { cudasim::options().undefined_values_are_errors = true; }
void check_every_block() { cudasim::options().sample = 0; }
static void (*g_fatal)(int, const Diagnosis&) = nullptr;

static void forward_fatal(const cudasim::DiagnosisView& v) {
  Diagnosis d;
  d.kind = v.kind;
  for (int i = 0; i < v.site_count; ++i) d.sites.push_back(v.sites[i]);
  d.has_block = v.has_block != 0;
  d.block = {v.block[0], v.block[1], v.block[2]};
  for (int i = 0; i < v.thread_count; ++i) d.threads.push_back({v.threads[i][0], v.threads[i][1], v.threads[i][2]});
  d.detail = v.detail;
  d.message = v.message;
  d.interleaved = v.interleaved != 0;
  g_fatal(v.code, d);
}

void on_fatal(void (*hook)(int, const Diagnosis&)) {
  g_fatal = hook;
  cudasim::set_fatal_hook(hook ? &forward_fatal : nullptr);
}

int diagnosis_code(const char* kind) { return cudasim::diagnosis_code(kind); }

bool forbid_device_to_host_copies(bool on) {
  const bool was = cudasim::device_to_host_copies_forbidden();
  cudasim::set_device_to_host_copies_forbidden(on);
  return was;
}

std::string stats_json() {
  cudasim::Stats s = cudasim::stats();
  const cudasim::Options& o = cudasim::options();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"threads\": %llu, \"kernel_seconds\": %.6f, \"launches\": %llu, \"switches\": %llu, \"schedules\": %d, "
                "\"workers\": %d, \"fibers\": \"%s\"}",
                (unsigned long long)s.threads, s.kernel_seconds, (unsigned long long)s.launches, (unsigned long long)s.switches,
                o.schedule_count, o.workers, cudasim::fiber_backend());
  return buf;
}

}  // namespace backend
}  // namespace harness

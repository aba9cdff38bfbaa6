#include <cstdio>
#include <string>

#include "backend.h"
#include "cudasim/runtime.h"

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
void on_fatal(void (*hook)(int, const char*)) { cudasim::set_fatal_hook(hook); }

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

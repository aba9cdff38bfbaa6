#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "backend.h"

namespace harness {
namespace backend {

std::string describe() {
  cudaDeviceProp p{};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) return "GPU (no device found)";
  char buf[512];
  std::snprintf(buf, sizeof buf, "GPU %s (sm_%d%d, %d SMs)", p.name, p.major, p.minor, p.multiProcessorCount);
  return buf;
}

bool set_schedules(const char*) { return false; }
void set_seed(unsigned long long) {}
void strict_undefined_values() {}
void check_every_block() {}
void on_fatal(void (*)(int, const Diagnosis&)) {}
int diagnosis_code(const char*) { return 0; }
bool forbid_device_to_host_copies(bool) { return false; }  // a GPU cannot tell who copies
// Nothing on a GPU records who wrote device memory: the origin of a wrong output is unknown.
bool watch_supported() { return false; }
void watch_begin() {}
std::string watch_origin_json(const void*, bool) { return ""; }
void watch_end() {}
std::string stats_json() { return ""; }

}  // namespace backend
}  // namespace harness

// What differs between the CPU simulator and the GPU, for harness/src/main.cpp.
#pragma once

#include <string>

namespace harness {
namespace backend {
std::string describe();                  // one line: which device, which execution model
bool set_schedules(const char* list);    // simulator only; false if unknown or unsupported
void set_seed(unsigned long long seed);  // seeds the simulator's random schedule
void on_fatal(void (*hook)(int code, const char* kind));
std::string stats_json();  // simulator counters as a JSON object, or "" on the GPU
}  // namespace backend
}  // namespace harness

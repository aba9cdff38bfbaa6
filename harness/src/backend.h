// What differs between the CPU simulator and the GPU, for harness/src/main.cpp.
#pragma once

#include <string>

#include "diagnosis.h"

namespace harness {
namespace backend {
std::string describe();                  // one line: which device, which execution model
bool set_schedules(const char* list);    // simulator only; false if unknown or unsupported
void set_seed(unsigned long long seed);  // seeds the simulator's random schedule
// The simulator stops at an undefined value (uninitialized read, a shuffle of an absent lane) instead of warning.
void strict_undefined_values();
// The simulator's memory checker checks every block of every launch (no sampling of big launches).
void check_every_block();
// hook runs just before the process exits on a kernel error or a crash (exit code 3 race, 4 other).
void on_fatal(void (*hook)(int code, const Diagnosis& d));
int diagnosis_code(const char* kind);  // the exit code of a simulator kind (3 or 4), or 0: no such kind
// While forbidden (simulator only), a copy of device memory to the host ends the run with the
// diagnosis host_copy_in_launcher; returns whether it was forbidden before.
bool forbid_device_to_host_copies(bool on);
// Where a wrong output came from (simulator only; a GPU cannot say): watch_begin() makes the next
// launches record every write with the reads it was computed from, on one schedule; then
// watch_origin_json() walks back from a device word (JSON nodes, or "" when unknown).
bool watch_supported();
void watch_begin();
std::string watch_origin_json(const void* device, bool is_float);
void watch_end();
std::string stats_json();  // simulator counters as a JSON object, or "" on the GPU
}  // namespace backend
}  // namespace harness

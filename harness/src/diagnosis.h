// The simulator's diagnosis of the error that ended a run, as the harness carries it: in the
// driver's RESULT line (harness.cpp) and, under `grade`, from the learner's process to the
// checker (channel.h). The kinds are the simulator's (harness/sim/src/diagnosis.h).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace harness {

struct Diagnosis {
  std::string kind;                // "deadlock", "race_shared", "host_call", ...
  std::vector<std::string> sites;  // "file:line": one, or a race's two accesses
  bool has_block = false;
  std::array<unsigned, 3> block{};
  std::vector<std::array<unsigned, 3>> threads;  // at most two
  std::string detail;              // what the kind alone does not say (the host function's name), or ""
  std::string message;             // the first line of the simulator's message
  bool interleaved = false;        // found where blocks took turns side by side (cudasim's Diagnosis)
};

// {"kind": ..., "sites": [...], "block": [x, y, z] or null, "threads": [[x, y, z], ...],
//  "detail": ... or null, "message": ..., "interleaved": true or false}
std::string diagnosis_json(const Diagnosis& d);

namespace detail {
// The learner's process under `grade`: sends d on the output channel (channel.h, DiagnosisRecord).
void send_diagnosis(const Diagnosis& d);
}  // namespace detail

}  // namespace harness

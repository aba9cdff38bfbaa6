// The simulator's diagnosis of the error that ended a run, as the harness carries it: in the
// driver's RESULT line (harness.cpp) and, under `grade`, from the learner's process to the
// checker (channel.h). The kinds are the simulator's (harness/sim/src/diagnosis.h). The harness
// never looks inside the record: a new fact crosses it unchanged.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace harness {

struct Diagnosis {
  std::string kind;    // "deadlock", "race_shared", "host_call", ...
  std::string record;  // the simulator's record: one JSON object (docs/architecture.md, "The diagnosis record")
};

// The record, for RESULT's "diagnosis" field.
std::string diagnosis_json(const Diagnosis& d);

namespace detail {
// The learner's process under `grade`: sends d on the output channel (channel.h, DiagnosisRecord).
void send_diagnosis(const Diagnosis& d);
}  // namespace detail

}  // namespace harness

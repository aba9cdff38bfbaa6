// What the simulator found, as data: the kind of error (one stable snake_case name each), where,
// and who. The driver's RESULT line carries it out of the process (docs/architecture.md, "The
// driver binary protocol"), and scripts/puzzlelib/explain.py names each kind's reason for the
// learner. Not included by learner code.
#pragma once

#include "private.h"

#include <cstdint>
#include <string>
#include <vector>

#include "cudasim/runtime.h"
#include "cudasim/control.h"

// Every kind the simulator reports: X(name, exit code, category). The exit code is 3 for a race
// and 4 otherwise; the category is the coarser word the trace's "error" event and
// KernelError::kind carry. tests/python/test_explain.py reads this list: every name must have a
// reason in explain.py.
#define CUDASIM_DIAGNOSIS_KINDS(X)                \
  X(deadlock, 4, "deadlock")                      \
  X(barrier_divergence, 4, "divergence")          \
  X(runaway_thread, 4, "runaway")                 \
  X(endless_wait, 4, "runaway")                   \
  X(runaway_block, 4, "runaway")                  \
  X(runaway_barrier, 4, "runaway")                \
  X(race_shared, 3, "race")                       \
  X(race_device, 3, "race")                       \
  X(race_schedule, 3, "race")                     \
  X(race_atomic_scope, 3, "race")                 \
  X(race_mixed_access, 3, "race")                 \
  X(race_read_only, 3, "race")                    \
  X(uninit_shared, 4, "uninitialized")            \
  X(uninit_device, 4, "uninitialized")            \
  X(warp_lane_returned, 4, "warp")                \
  X(warp_mask_without_self, 4, "warp")            \
  X(warp_misuse, 4, "warp")                       \
  X(cuda_barrier_misuse, 4, "barrier")            \
  X(stack_overflow, 4, "error")                   \
  X(null_dereference, 4, "error")                 \
  X(use_after_free, 4, "error")                   \
  X(out_of_bounds, 4, "out-of-bounds")            \
  X(crash_host, 4, "error")                       \
  X(crash_device, 4, "error")                     \
  X(arithmetic, 4, "error")                       \
  X(out_of_memory, 4, "resource")                 \
  X(shared_arena_full, 4, "resource")             \
  X(shared_memory_limit, 4, "launch")             \
  X(bad_pointer_argument, 4, "pointer")           \
  X(exception, 4, "exception")                    \
  X(device_code_from_host, 4, "misuse")           \
  X(host_call, 4, "host-call")                   \
  X(host_copy_in_launcher, 4, "misuse")

namespace cudasim {
namespace detail {

enum class Kind : uint8_t {
#define CUDASIM_KIND_ENUM(name, code, category) name,
  CUDASIM_DIAGNOSIS_KINDS(CUDASIM_KIND_ENUM)
#undef CUDASIM_KIND_ENUM
};

const char* kind_name(Kind k);      // "barrier_divergence"
int kind_code(Kind k);              // the exit code: 3 race, 4 other
const char* kind_category(Kind k);  // "divergence"

// The facts of a diagnosis that its kind alone does not say, by name: the array and index, the
// barrier interval, counts, the source expression... Everything a front end words for the
// learner comes from here and the fields below; scripts/puzzlelib/diagnosis.py renders them in
// the learner's language, and its rules choose the advice from them. The record crosses the
// processes as one JSON object (record_json), so a new fact is set here and read there, and no
// code in between changes.
class Facts {
 public:
  Facts& set(const char* name, const std::string& value);
  Facts& set(const char* name, const char* value);
  Facts& set(const char* name, long long value);
  Facts& set(const char* name, int value) { return set(name, (long long)value); }
  Facts& set(const char* name, unsigned value) { return set(name, (long long)value); }
  Facts& set(const char* name, size_t value) { return set(name, (long long)value); }
  Facts& set(const char* name, bool value);
  Facts& set(const char* name, uint3 value);
  Facts& set_json(const char* name, const std::string& json);  // an array or object already in JSON
  bool empty() const { return body_.empty(); }
  const std::string& body() const { return body_; }  // the members, without the braces
  std::string json() const { return "{" + body_ + "}"; }

 private:
  Facts& raw(const char* name, const std::string& json);
  std::string body_;
};

std::string json_quote(const std::string& s);  // a JSON string literal
std::string json_uint3(uint3 v);                 // [x, y, z]

struct Diagnosis {
  Diagnosis() = default;
  explicit Diagnosis(Kind k) : kind(k) {}
  Kind kind = Kind::crash_host;
  std::vector<std::string> sites;  // "file:line" of the code involved: one, or a race's two accesses
  bool has_block = false;
  uint3 block{0, 0, 0};
  std::vector<uint3> threads;  // the thread(s) involved, at most two
  std::string detail;          // what the kind alone does not say (the host function's name), or ""
  // Found by the run whose blocks took turns side by side (Grid::interleave: the 'random' schedule
  // of a checked launch); for race_schedule, the result differed from the first schedule's because
  // blocks interleaved, which runs of one block at a time never show.
  bool interleaved = false;
  Facts facts;
};

// A note of the simulator (not an error: the run goes on). `english` is what a program run by hand
// prints after "cudasim: note: "; run by the CLI (PUZZLES_DRIVER_TEXT=data), the note is printed
// as data instead, `SAY {"key": key, "text": "cudasim: note: " + text, facts...}`, whose template
// `text` (with {name} placeholders for `facts`) is the msgid of its Korean form
// (scripts/puzzlelib/driver_text.py renders it).
void say_note(const char* key, const std::string& english, const char* text, const Facts& facts);

// The whole diagnosis as one JSON object, the form every front end reads (docs/architecture.md,
// "The diagnosis record"): kind, category, code, sites, block, threads, detail, interleaved,
// message (the English report, for programs run without the CLI) and facts.
std::string record_json(const Diagnosis& d, const std::string& message);

}  // namespace detail
}  // namespace cudasim

// The output channel of a graded run (docs/instructors.md, "How a verdict is reached").
//
// Under `grade`, a case runs as two processes. The checker (pNN_checker: the driver and the
// harness, without the learner's file) starts the learner's binary (pNN_cpu) with the write end of
// a pipe in $PUZZLES_OUTPUT_FD. The learner's process runs the driver up to harness::finish() and,
// instead of comparing, sends what it downloaded: one Record per finish() call, followed by the
// output's bytes. The checker then runs the same driver function with launchers that do nothing,
// receives the learner's output at its own finish() call, and compares it with the reference it
// computed itself. Nothing the learner's process prints, exits with or writes into its own memory
// decides the verdict; the learner's process only supplies the output and what the simulator
// observed about who wrote it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace harness {
namespace channel {

constexpr const char* kOutputFdEnv = "PUZZLES_OUTPUT_FD";
constexpr uint64_t kMagic = 0x3154554f5a5a5550ull;  // "PUZZOUT1"

constexpr uint64_t kDiagnosisMagic = 0x334149445a5a5550ull;  // "PUZZDIA3" (3: the record as JSON)

// Who last wrote the bytes of a downloaded output buffer, as the simulator saw it.
enum class Writer : uint8_t { None = 0, Host = 1, Memset = 2, Kernel = 3 };

struct Provenance {
  uint8_t known = 0;  // 1: the output was downloaded from one device buffer the simulator tracks
  uint8_t first_other_writer = 0;  // Writer of the first byte not written by a kernel
  uint8_t pad[6] = {};
  uint64_t bytes_by_writer[4] = {};  // indexed by Writer
  int64_t first_other = -1;  // byte offset of the first byte not written by a kernel, or -1
  uint64_t launches = 0;  // kernel launches of the process so far
};

struct Record {
  uint64_t magic = kMagic;
  int64_t n = 0;
  int64_t tpb = 0;
  uint64_t seed = 0;
  uint64_t element_size = 0;
  uint64_t count = 0;  // elements that follow the record
  Provenance provenance;
};

// The simulator's diagnosis of the error that ends the learner's process, sent just before it
// exits (harness/src/diagnosis.h). The checker only uses it to explain an exit code that is a
// failure already (3 race, 4 error), and only when its kind is a simulator kind of that exit
// code: forged, it can at most misname the error, never turn it into a pass. The checker passes
// the record on as a JSON string, never as JSON of its own, so a forged record cannot add fields
// to the checker's RESULT. Strings are NUL-terminated and cut to their array; a record longer
// than the array is replaced by {"kind": ...}.
struct DiagnosisRecord {
  uint64_t magic = kDiagnosisMagic;
  char kind[32] = {};
  uint32_t length = 0;  // bytes of `record` used
  char record[32768] = {};
};

const char* writer_name(Writer w);  // "a kernel", "cudaMemset", "a cudaMemcpy from host memory", ...

}  // namespace channel
}  // namespace harness

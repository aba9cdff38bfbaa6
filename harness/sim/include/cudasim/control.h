// cudasim's control API: what the harness and the simulator's own tests set and read around
// kernels (schedules, limits, how an error ends, the diagnosis as data, who wrote device memory).
// None of it is CUDA, so a learner's file must not use it: a puzzle built for the GPU would not
// compile. The puzzle build defines CUDASIM_LEARNER_FILE for the learner's translated file.
#pragma once

#if defined(CUDASIM_LEARNER_FILE)
#error "cudasim/control.h is the harness's, not part of CUDA: a puzzle file uses only CUDA's own API, so that it also builds with nvcc"
#endif

#include <cstddef>
#include <cstdint>

namespace cudasim {

enum class Schedule : uint8_t { Forward, Reverse, Random };
const char* schedule_name(Schedule s);

struct Options {
  Schedule schedules[3] = {Schedule::Forward, Schedule::Reverse, Schedule::Random};
  int schedule_count = 3;    // each launch runs once per schedule; results must agree
  int workers = 0;           // 0: one per core
  double stall_seconds = 5;  // a thread running this long without a barrier is a runaway
  double block_seconds = 20;  // a block running this long (barriers or not) is a runaway
  uint64_t seed = 1;         // seeds the random schedule
  size_t stack_bytes = 128 * 1024;
  bool checks = true;  // the memory checker: hazards, uninitialized reads, bounds (CUDASIM_CHECKS=0: off)
  long max_barrier_passes = 100000;  // one barrier passed this often by one block: a loop that never ends
  // Undefined values: a read of uninitialized memory, or a shuffle that reads an absent lane. When
  // true (the puzzles' harness: the course teaches these), the program stops with the report. When
  // false (programs run with `puzzle.py sim`), the report is a warning and the run goes on; the
  // schedule comparison then decides, since each schedule fills undefined values differently.
  bool undefined_values_are_errors = false;
  // Big launches (CUDASIM_SAMPLE): -1 (`auto`, the default) checks a launch of at least 64 blocks
  // and 131072 threads on a sample of its blocks (the first, the last and 8 drawn from the seed)
  // and runs the rest unchecked; 0 (`all`, the puzzles' harness) checks every block; N > 0 checks
  // N drawn blocks beside the first and the last in every launch of more than N + 2 blocks.
  int sample = -1;
};
Options& options();  // initialised from CUDASIM_* environment variables on first use
// Parses "forward,reverse,random"; returns false on an unknown name.
bool set_schedules(const char* list);

struct Stats {
  uint64_t threads = 0;  // simulated CUDA threads run (all schedules)
  uint64_t switches = 0; // fiber switches
  uint64_t launches = 0;
  double kernel_seconds = 0;  // wall time spent inside launches (all schedules)
  bool uninstrumented = false;  // the program runs as its uninstrumented build (NAME.fast, fast_build.cpp)
};
Stats stats();
const char* fiber_backend();  // "native x86-64", "boost.context" or "ucontext"

// How a kernel error (race, divergence, deadlock, warp misuse, launch of a host pointer...) ends.
// Exit: print the diagnostic, call the fatal hook, exit with the code. Throw: throw KernelError
// from the launch (used by the simulator's own tests).
enum class ErrorMode { Exit, Throw };
void set_error_mode(ErrorMode m);
// What the simulator found when it reports an error, as data (harness/sim/src/diagnosis.h lists
// the kinds). Strings are "" and counts 0 where a kind has none; the strings live during the hook only.
struct DiagnosisView {
  int code;            // the exit code: 3 for a race, 4 otherwise
  const char* kind;    // stable snake_case name: "deadlock", "race_shared", "host_call", ...
  const char* record;  // the whole diagnosis as one JSON object (docs/architecture.md, "The
                       // diagnosis record"): kind, sites, block, threads, facts, message, ...
};
// Called just before the process exits on a kernel error or a crash, after the message.
void set_fatal_hook(void (*hook)(const DiagnosisView& d));
// The exit code of a kind name (3 or 4), or 0 when the simulator has no such kind.
int diagnosis_code(const char* kind);

// Who last wrote each byte of device memory, for graders: a kernel's store or atomic, cudaMemset,
// or a cudaMemcpy from host memory (a device-to-device copy keeps the source bytes' writers).
enum class Writer : uint8_t { None = 0, Host = 1, Memset = 2, Kernel = 3 };
// Fills out[0..bytes) for [p, p + bytes), which must lie inside one live cudaMalloc buffer;
// returns false otherwise.
bool last_writers(const void* p, size_t bytes, Writer* out);

// Where a value in device memory came from (the harness asks after a wrong answer, and reruns the
// case to find out). Between watch_begin() and watch_end(), every write of a checked launch is
// recorded with the reads its thread made since its previous write (the last four, each with the
// value read and the write that had set it); a bounded table (about a million writes).
void watch_begin();
void watch_end();
struct OriginNode {
  enum Kind { Never = 0, Write = 1, Host = 2, Memset = 3 };
  int kind;             // Write: a kernel's store or atomic; Host: a cudaMemcpy from the host (an input);
                        // Memset: cudaMemset; Never: nothing recorded wrote it
  char array[48];       // as reports name it: a kernel parameter ("out"), a __shared__ array, "buffer #2"
  long long index;      // element index in `array`
  int shared;           // shared memory (of `block`), else device memory
  unsigned block[3], thread[3];  // Write: who wrote it
  char site[256];       // Write: the store's "file:line"
  unsigned epoch;       // Write: the __syncthreads() its block had passed before the store
  const char* type;     // the element type when the buffer's is known ("int", "float"), else ""
  int depth;            // steps back from the watched word
  int nreads;           // the reads the writing thread made since its previous write
  int reads[4];         // index of each read's writer in the returned nodes (-1: not followed)
  uint32_t values[4];   // the 4-byte word each read returned
  char read_sites[4][256];  // the "file:line" of each read
  char read_arrays[4][48];  // each read's word as the reading kernel names it (the writer may name
  long long read_index[4];  // it otherwise: one launch's `out` is the next one's `scanned_sums`)
  int more_reads;       // reads beyond the four kept
};
// The write that set the word at p during the watch, and the writes it was computed from, breadth
// first, at most max_nodes and max_depth steps back; returns how many (0: no write recorded).
int watch_origin(const void* p, OriginNode* out, int max_nodes, int max_depth);
bool watch_overflowed();  // the table filled up: the walk may stop early

// While forbidden, a copy of device memory into host memory (cudaMemcpy and cudaMemcpyAsync that
// read device or managed memory into host memory, either kind included cudaMemcpyDefault;
// cudaMemcpy2D; cudaMemcpyFromSymbol) ends the program with the diagnosis host_copy_in_launcher.
// The puzzles' harness forbids them while a case runs and lifts the ban for its own downloads of
// the output: the learner's launchers must leave the answer to their kernels.
void set_device_to_host_copies_forbidden(bool on);
bool device_to_host_copies_forbidden();

struct KernelError {
  int code;          // 3 race, 4 other
  const char* kind;  // short machine name: "race", "divergence", "deadlock", "warp", ...
  const char* diagnosis;  // the finer kind of DiagnosisView::kind: "race_shared", "barrier_divergence", ...
  char message[4096];
};

}  // namespace cudasim

// Shared declarations of the simulator's translation units. Not included by learner code.
#pragma once

#include "private.h"

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdarg>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cudasim/runtime.h"
#include "cudasim/control.h"
#include "check.h"
#include "diagnosis.h"
#include "fiber.h"

namespace cudasim {
namespace detail {

enum class St : uint8_t { Runnable, AtBarrier, AtWarp, AtCBar, Exited, Faulted };

// A simulated thread. The first cache line holds what a barrier and the sweep touch on every
// switch (state, ready epoch, wait site, sweep link, the native fiber's stack pointer), so that a
// switch to the next thread costs one line of its bookkeeping (16 KiB for 256 threads).
struct alignas(64) Thread {
  ThreadView view;  // what threadIdx and the lane id read
  St st = St::Runnable;
  // Not started yet: it has no stack until the sweep first reaches it (start_thread in
  // scheduler.cpp), and a thread that returns runs the next fresh thread on its own stack.
  bool fresh = false;
  unsigned linear = 0;
  // The sweep resumes the thread once the block's barrier epoch (Worker::bar_epoch) is at least
  // this: 0 while runnable, the epoch after the one it waits at when at a barrier, and
  // kNotReady (scheduler.h) while a warp collective or a cuda::barrier holds it, or once it ended.
  uint32_t ready = 0;
  int wait_line = 0;
  // Where the thread waits, for diagnostics and barrier matching.
  const char* wait_file = nullptr;
  const char* wait_what = nullptr;
  Thread* next = nullptr;  // the thread after it in the sweep order (scheduler.cpp, link_order)
#if CUDASIM_NATIVE_SWITCH
  FiberCtx fiber;  // one pointer: stays in the first line
#endif
  // At a barrier the thread records where it waits only when that is not where the first arrival
  // waits (Worker::bar_file): wait_own is then the epoch it waits for (see barrier_wait_site).
  uint32_t wait_own = 0;
  uint32_t bars_at_exit = 0;  // __syncthreads() intervals passed before it returned
  uint32_t clock_reads = 0;   // device clock()/clock64() calls (see device_clock)
  unsigned wait_mask = 0;
  uint64_t warp_result = 0;
  CBarState* cbar = nullptr;  // the cuda::barrier waited on (St::AtCBar), and for which phase
  uint64_t cbar_token = 0;
  uintptr_t stack_lo = 0;     // its stack, from when it starts: the lowest address (the checker
  unsigned stack_slot = 0;    // skips its locals), and which of the worker's stacks it is
  uint32_t am_mask = 0;       // the last __activemask() result and where it was taken
  const char* am_file = nullptr;
  int am_line = 0;
  // Polling (watch_spin in scheduler.h): the last two words of global memory the thread read and
  // how often in a row it read one of them again, without a plain write, in barrier interval spin_epoch.
  uintptr_t spin_addr[2] = {0, 0};
  uint32_t spin_polls = 0;
  uint32_t spin_epoch = 0;
#if !CUDASIM_NATIVE_SWITCH
  FiberCtx fiber;  // Boost's or ucontext's, larger: after the rest
#endif
};
#if CUDASIM_NATIVE_SWITCH
static_assert(offsetof(Thread, fiber) + sizeof(FiberCtx) <= 64, "what a switch touches stays in the first cache line");
#endif

// Lanes of one warp that meet in one *_sync call with the same mask.
struct WarpGroup {
  WarpOp op;
  unsigned mask;
  unsigned arrived;
  int width;
  int value_bytes;
  bool is_signed;
  const char* file;
  int line;
  uint64_t value[32];
  int param[32];
};

struct Warp {
  unsigned live = 0;  // lanes that exist and have not exited
  std::vector<WarpGroup> groups;
};

// A `__shared__` variable of the block running on a worker (see static_shared_raw).
struct SharedArray {
  void* p;
  size_t bytes;
  size_t elem;  // bytes of one element, for indices in reports
  const char* name;
  const char* file;
  int line;
};

struct Grid;
struct Interleave;

struct BarSite {
  const char* file;
  int line;
  uint64_t count;
};

// One per worker OS thread. A worker runs one block at a time; all of the block's fibers share it.
struct Worker {
  int index = 0;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  std::vector<void*> stacks;  // one per thread slot, with a guard page below each
  std::vector<uintptr_t> stack_tops;  // where a fiber on each stack starts (see stack_top in scheduler.cpp)
  // The stacks free in the running block: the ones no thread has used yet (stack_next on), and
  // those of threads that returned (stack_free, the last one freed on top, the warmest).
  unsigned stack_next = 0;
  std::vector<unsigned> stack_free;
  unsigned char* dyn_guard = nullptr;  // the inaccessible page after dynamic shared memory
  unsigned char* dyn_start = nullptr;
  size_t dyn_bytes = 0;
  std::vector<SharedArray> shared_arrays;  // top of the arena first
  unsigned char* sh_guard = nullptr;       // the inaccessible page above the arena
  BlockView block;
  unsigned block_linear = 0;
  Grid* grid = nullptr;
  uint64_t rng = 0;
  // The block barrier of the current interval: how many arrived, whether all arrived at the same
  // call (bar_file, bar_line), the __syncthreads_count/and/or tallies, and the result they get.
  uint32_t bar_epoch = 0;
  unsigned bar_arrived = 0;
  // The first arrival at the barrier of the current interval: where it waits. The others compare
  // against these, next to bar_arrived, instead of the first thread's bookkeeping.
  const char* bar_file = nullptr;
  const char* bar_what = nullptr;
  int bar_line = 0;
  bool bar_mismatch = false;
  // Where the barrier that released last waits (the first arrival's site): the site of the threads
  // that waited there and have not run since.
  const char* released_file = nullptr;
  const char* released_what = nullptr;
  int released_line = 0;
  int bar_kind = -1;  // -1 __syncthreads, 0 count, 1 and, 2 or
  int bar_count = 0, bar_all = 1, bar_any = 0;
  int bar_result = 0;
  unsigned at_warp = 0;  // threads of the block waiting in a warp collective
  unsigned at_cbar = 0;  // threads of the block waiting on a cuda::barrier phase
  unsigned exited = 0;   // threads of the block that have returned
  unsigned sweep_n = 0;  // threads of the block in progress
  bool woke = false;     // a warp collective released waiting lanes during this sweep
  // Watchdog: progress counts resumptions; current is the running thread, or null.
  std::atomic<uint64_t> progress{0};
  // The OS thread that runs this worker's blocks (for a slot of an interleaved run, the pool thread
  // it takes turns on), once known: the watchdog interrupts it to see where a runaway thread runs.
  std::atomic<bool> os_thread_known{false};
  pthread_t os_thread{};
  std::atomic<uint64_t> threads_run{0};
  // The threads in the order of the current sweep (schedule order), and the layout they were
  // last set up for: a block of the same shape as the previous one reuses threadIdx, the lane
  // ids and this list instead of recomputing them.
  std::vector<Thread*> order;  // linked through Thread::next, ending at `idle` (below)
  dim3 layout_bd{0, 0, 0};
  Thread* layout_base = nullptr;  // threads.data() when laid out
  Schedule layout_schedule = Schedule::Forward;
  std::atomic<Thread*> current{nullptr};
  bool faulted = false;
  // Observers: whether this grid run is checked, and observed at all (checked or profiled: see
  // Grid::observed); the memory checker's own state for this worker (check.h).
  bool checking = false;
  bool observed = false;
  bool spin_watch = false;  // Grid::spin_watch of the grid being run
  WorkerCheck* ck = nullptr;
  // Where accesses land, for the access front end: the fibers' stacks (a thread's locals are not
  // shared), the static shared arena and dynamic shared memory.
  size_t stack_bytes = 0;  // of every fiber's stack, from Thread::stack_lo up
  uintptr_t sh_lo = 0, sh_len = 0;
  uintptr_t dyn_lo = 0, dyn_len = 0;
  const char* dyn_name = nullptr;  // the first `extern __shared__` name the block used, and its element size
  size_t dyn_elem = 0;
  const char* epoch_file = nullptr;  // the barrier that began the current interval
  int epoch_line = 0;
  std::vector<BarSite> bar_sites;    // how often each barrier was passed by this block
  // For the watchdog: when the block started (steady-clock ns, 0: none), and the barrier it has
  // passed most often.
  std::atomic<int64_t> block_start_ns{0};
  std::atomic<const char*> hot_file{nullptr};
  std::atomic<int> hot_line{0};
  std::atomic<uint64_t> hot_count{0};
  // The end of every sweep list, always ready; its context is the scheduler's (run_block), to which
  // a thread switches by switching to it.
  Thread idle;
  // The turn-taking of an interleaved run (workers.cpp): set while this worker is one of the slots
  // whose blocks take turns on one OS thread, null otherwise.
  Interleave* il = nullptr;
};

// Where a thread at a block barrier (St::AtBarrier) waits. A thread that arrives where the first
// arrival did records nothing (__syncthreads() is the simulator's most frequent call): it waits
// where the first arrival of its barrier waits, the current interval's (bar_*) or, once that
// barrier has released and before the thread runs again, the released one's (released_*).
struct WaitSite {
  const char* what;
  const char* file;
  int line;
};
inline WaitSite barrier_wait_site(const Worker& w, const Thread& t) {
  if (t.wait_own == t.ready) return {t.wait_what, t.wait_file, t.wait_line};
  if (t.ready == w.bar_epoch + 1) return {w.bar_what, w.bar_file, w.bar_line};
  return {w.released_what, w.released_file, w.released_line};
}
// Where any waiting thread waits: a barrier as above, a warp collective or a cuda::barrier as it recorded.
inline WaitSite wait_site(const Worker& w, const Thread& t) {
  return t.st == St::AtBarrier ? barrier_wait_site(w, t) : WaitSite{t.wait_what, t.wait_file, t.wait_line};
}

extern __thread Worker* tl_worker;
// Some observer watches the launch in flight: the instrumentation's entry points raise accesses
// (access.cpp). Off, an access costs a call, this test and a return.
extern bool g_observed_launch;
// A block of a sampled launch that the checker skips is running (sampling.cpp): its accesses take
// the fast path, and an atomic only sets g_unchecked_atomic (access.cpp).
extern bool g_unchecked_block;
extern bool g_unchecked_atomic;

// An error found while running a grid: the first one wins.
struct ErrorRec {
  int code = 0;  // 3 race, 4 other; 0 while none was found
  Diagnosis diagnosis;
  std::string message;
  ErrorRec() = default;
  ErrorRec(Diagnosis d, std::string m) : code(kind_code(d.kind)), diagnosis(std::move(d)), message(std::move(m)) {}
};

struct Grid {
  LaunchSite site;
  dim3 grid, block;
  size_t shmem;
  Invoke invoke;
  const void* args;
  Schedule schedule;
  int schedule_index;
  bool checking = false;  // the memory checker runs (one worker, first schedule)
  // Some observer watches this run (the checker, or the profiler: profile.h): it runs on one worker
  // and its accesses are raised as events.
  bool observed = false;
  // The run's blocks go one after another on one worker, and a thread that polls global memory
  // without end is reported (watch_spin): set for every schedule of a checked launch, so that
  // whether blocks that wait on each other finish does not depend on the number of workers.
  bool spin_watch = false;
  // The run's blocks take turns on one OS thread, several at once, switching at every barrier and
  // while they poll (workers.cpp, run_interleaved): set for the 'random' schedule of a checked
  // launch, so that blocks that ran side by side on a GPU run side by side here too, with any
  // number of workers.
  bool interleave = false;
  uint64_t seed;
  // A big launch checked on a sample of its blocks (sampling.cpp): 1 for each block the checker
  // checks; empty when every block is checked.
  std::vector<uint8_t> sample;
  std::vector<uint32_t> order;  // block dispatch order
  std::atomic<size_t> next{0};
  std::atomic<bool> abort{false};
  std::mutex err_mu;
  ErrorRec err;
  void fail(const Diagnosis& d, const std::string& msg);
};

// The uninstrumented build of a program (fast_build.cpp): whether this is one, and the error that
// stops it when a launch needs the instrumentation it lacks (`observed`: checked, traced, profiled,
// or polling watched).
bool uninstrumented_build();
void uninstrumented_launch_check(bool observed);

// Formatting helpers.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string where(const char* file, int line);
std::string dim_str(uint3 v, dim3 extent);  // "5" for 1-D extents, "(x, y, z)" otherwise
std::string ranges(const std::vector<unsigned>& ids);  // "0-3, 8, 10-15"
std::string kernel_str(const LaunchSite& s);
// The facts of a diagnosis record (diagnosis.h) that say which launch: "kernel", "launch_site", and
// the launch's shape, "grid_dim" and "block_dim" (a front end writes an index as 5 in a 1-D launch
// and (5, 0, 0) otherwise, like dim_str).
void launch_facts(Facts& f, const LaunchSite& s, dim3 grid, dim3 block);
void launch_facts(Facts& f, const Grid& g);
// Thread indices as JSON ranges, the record's form of ranges(): [[0, 3], [8, 8], [10, 15]].
std::string ranges_json(const std::vector<unsigned>& ids);

// The worker pool (workers.cpp) and its counters.
void run_grid(Grid& g);
bool thread_local_shared_used();  // some translated file keeps shared memory per OS thread (workers.cpp)
void worker_threads_init();
uint64_t fiber_switch_count();
uint64_t threads_run_count();

// Memory (memory.cpp). Every device buffer lives in one reserved arena, in a slot of its own:
// an inaccessible gap, the pages that hold the buffer (front canaries, data, slack canaries), and
// another gap. Everything in the arena outside the live buffers' pages is inaccessible.
struct Alloc {
  int id;
  uintptr_t map_base;  // the buffer's accessible pages: front canaries, data, slack
  size_t map_len;
  uintptr_t data;
  size_t bytes;
  size_t elem;
  const char* type;
  const char* file;
  int line;
  uintptr_t slot_lo = 0;  // the slot: the gap before, the pages, the gap after
  uintptr_t slot_hi = 0;
  const char* free_file = nullptr;  // where cudaFree released it (freed buffers)
  int free_line = 0;
};
// The arena's range (0 and 0 until the first allocation reserves it): device code that touches
// it outside every live buffer is out of bounds or a use after free.
extern uintptr_t g_arena_lo;
extern uintptr_t g_arena_len;
// The live allocation containing [p, p + len), or null.
const Alloc* find_alloc(const void* p, size_t len = 1);
// The live allocation whose slot (gaps, canaries, data, slack) contains p, or null: the buffer an
// access there is blamed on.
const Alloc* find_alloc_any(const void* p);
// The live allocation whose bytes are nearest to p, or null when none is live.
const Alloc* nearest_alloc(uintptr_t p);
// A freed allocation whose pages held p (and that no later allocation reused), or null.
const Alloc* freed_alloc(uintptr_t p);
// Whether the buffer came from an untyped cudaMalloc (void**): its element size is unknown, so
// offsets into it are counted in bytes.
inline bool alloc_untyped(const Alloc& a) { return a.elem <= 1 && !a.type; }
// For an address outside a's pages: "8000000 bytes before its start" or "12 bytes after its end";
// "" for an address in its pages (canaries and slack), where the index says enough.
std::string alloc_distance(const Alloc& a, uintptr_t p);
std::string alloc_str(const Alloc& a);
// The buffer as a diagnosis fact: {"id", "bytes", "site", "api" ("cudaMalloc"/"cudaMallocManaged"),
// "elements" and "type" when typed} or, for a __device__ variable (id 0), {"id": 0, "name", "bytes", "site"}.
std::string alloc_json(const Alloc& a);
// For a faulting address: a description of what it hits (guard page, freed buffer...), or "".
// *kind, when given, becomes out_of_bounds or use_after_free for an address the description names.
std::string describe_address(uintptr_t addr, Kind* kind = nullptr, Facts* facts = nullptr);
// Race detection: copy every live allocation / compare with a copy / restore it. A copy is kept in
// chunks of kSnapChunk bytes: a chunk of one repeated byte (memory nothing wrote yet, a memset)
// is that byte, and a snapshot taken with a `base` keeps only the chunks that differ from it.
constexpr size_t kSnapChunk = 4096;
struct SnapPart {
  const Alloc* a;
  // Per chunk: an offset into `data`, or kSnapUniform | the byte, or kSnapBase (the base's chunk).
  std::vector<uint64_t> at;
  std::vector<unsigned char> data;
};
constexpr uint64_t kSnapUniform = uint64_t(1) << 62, kSnapBase = uint64_t(1) << 63;
struct Snapshot {
  std::vector<SnapPart> parts;
  const Snapshot* base = nullptr;
};
// `base`: keep only the chunks that differ from it (it must outlive `s`).
void snapshot_take(Snapshot& s, const Snapshot* base = nullptr);
void snapshot_restore(const Snapshot& s);
// Calls fn(address, bytes) for each run of elements of device memory (words of an untyped buffer)
// in which some byte differs from the copy.
void snapshot_changes(const Snapshot& s, const std::function<void(uintptr_t, size_t)>& fn);
// Returns "" when equal, else a description of the first differences.
// Elements that only atomics wrote are counted in *atomic_only instead (when given).
// With `facts`, the buffers that differ are appended to it as JSON objects too, comma-separated:
// {"buffer": alloc_json, "differ", "count", "bytes_index", "values": [{"index", "first", "second"}]}.
std::string snapshot_diff(const Snapshot& a, const char* name_a, const char* name_b, size_t* atomic_only = nullptr,
                          std::string* facts = nullptr);
// Checks the canaries around every allocation; returns "" or a description of the overwrite.
std::string check_canaries();
void set_last_error(cudaError_t e);
// Device memory is inaccessible to host code except inside the runtime, as on a GPU.
void device_access(bool on);
// Managed buffers (memory.cpp): whether an allocation is one; the protection that follows whether
// device-to-host copies are forbidden (host_reads.cpp calls it when that changes); and, for a host
// write that faulted on one, opening the buffer to host code until the next launch.
bool is_managed_alloc(const Alloc* a);
void managed_protection_update();
void open_managed_for_host(const Alloc& a);

// Reporting (report.cpp).
void report_kernel_error(const ErrorRec& e);  // prints, then exits or throws per ErrorMode
[[noreturn]] void fatal(const Diagnosis& d, const std::string& message);
// The simulator itself ran out of memory: `what` ("thread_stack", "stack", "shadow_memory",
// "shared_memory") is the diagnosis's fact of what it could not allocate.
[[noreturn]] void out_of_memory(const char* what, const std::string& message);
void install_crash_handlers();
void watchdog_start();
// Records an error of the running thread t (its block and thread go into the diagnosis, with the
// site and detail when given) and parks it for good.
[[noreturn]] void thread_fault_ext(Worker& w, Thread& t, Kind kind, const std::string& msg, const std::string& site = "",
                                   const std::string& detail = "", const Facts& facts = Facts());
std::string describe_current_thread();  // "kernel K, block b, thread t" or ""

// Symbols (symbols.cpp).
std::string code_line(void* pc);  // "file:line" of a code address (the innermost inlined frame), or ""
// "file:line" of each address of an instruction (an interrupted one, not a return address) in the
// learner's code: its innermost inlined frame that is neither the simulator's (its headers and
// sources) nor a system header; "" for an address that has none (the simulator, the C library).
std::vector<std::string> learner_lines(const std::vector<void*>& pcs);
// addr2line's "function at file:line" for a code address, then an "(inlined by) ..." line per
// caller, with paths relative to the working directory; "" when unknown.
std::string source_of(void* pc);
// The same, frame by frame (innermost first), as text and as a diagnosis fact (frames_json).
struct SourceFrame {
  std::string function, site;
};
std::vector<SourceFrame> source_frames(void* pc);
std::string source_text(const std::vector<SourceFrame>& frames);
std::string frames_json(const std::vector<SourceFrame>& frames);
std::string line_of_source(std::string s);  // the "file:line" of source_of's first line, or ""
// The user's file for a path of cu2cpp's output (a file that starts `#line 1 "<user's file>"`), with
// *line moved back over that directive; other paths unchanged.
std::string user_site(std::string file, int* line);

// Host functions called from device code are refused (host_calls.cpp). The simulator's own code
// that calls them while a simulated thread runs (addr2line through popen, _exit after a report)
// holds an OwnCalls for the duration.
extern __thread int tl_own_calls;
struct OwnCalls {
  OwnCalls() { ++tl_own_calls; }
  ~OwnCalls() { --tl_own_calls; }
  OwnCalls(const OwnCalls&) = delete;
  OwnCalls& operator=(const OwnCalls&) = delete;
};
extern std::atomic<int> g_schedule_index;  // schedule of the launch in flight (printf muting)
// Device printf (launch.cpp): a record into the launch's FIFO; printing the records kept, with a note
// on stderr when some were overwritten (site: the launch, or null when an error report follows).
void printf_fifo_put(std::string text);
void printf_fifo_flush(const LaunchSite* site);
// A copy of `bytes` of device memory into host memory, made at file:line (`how`: the API or kind).
// An error when the harness forbids such copies (host_reads.cpp); memory.cpp calls it.
void device_to_host_copy(size_t bytes, const char* how, const char* file, int line);

}  // namespace detail
}  // namespace cudasim

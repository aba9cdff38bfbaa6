// Kernel launch: validate the configuration as CUDA does, then run the grid once per schedule
// from the same device memory and compare; plus the rest of the runtime API.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "events.h"
#include "internal.h"
#include "sampling.h"

namespace cudasim {

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::Forward: return "forward";
    case Schedule::Reverse: return "reverse";
    case Schedule::Random: return "random";
  }
  return "?";
}

static bool parse_schedules(Options& o, const char* list) {
  Schedule parsed[3];
  int n = 0;
  std::string s(list);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    std::string name = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!name.empty()) {
      if (n == 3) return false;
      if (name == "forward") parsed[n++] = Schedule::Forward;
      else if (name == "reverse") parsed[n++] = Schedule::Reverse;
      else if (name == "random") parsed[n++] = Schedule::Random;
      else return false;
    }
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  if (n == 0) return false;
  for (int i = 0; i < n; ++i) o.schedules[i] = parsed[i];
  o.schedule_count = n;
  return true;
}

bool set_schedules(const char* list) { return parse_schedules(options(), list); }

Options& options() {
  static Options* o = [] {
    Options* x = new Options();
    if (const char* v = std::getenv("CUDASIM_WORKERS")) x->workers = std::atoi(v);
    if (const char* v = std::getenv("CUDASIM_STALL_SECONDS")) x->stall_seconds = std::atof(v);
    if (const char* v = std::getenv("CUDASIM_BLOCK_SECONDS")) x->block_seconds = std::atof(v);
    if (const char* v = std::getenv("CUDASIM_SEED")) x->seed = std::strtoull(v, nullptr, 10);
    if (const char* v = std::getenv("CUDASIM_STACK_KB")) x->stack_bytes = size_t(std::atoi(v)) * 1024;
    if (const char* v = std::getenv("CUDASIM_CHECKS")) x->checks = !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0);
    if (const char* v = std::getenv("CUDASIM_SAMPLE")) {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (std::strcmp(v, "all") == 0) x->sample = 0;
      else if (std::strcmp(v, "auto") == 0) x->sample = -1;
      else if (end != v && *end == 0 && n > 0) x->sample = int(std::min(n, 1L << 30));
      else
        std::fprintf(stderr, "cudasim: ignoring CUDASIM_SAMPLE=%s (expected all, auto, or a number of blocks to check)\n", v);
    }
    if (const char* v = std::getenv("CUDASIM_MAX_BARRIERS")) x->max_barrier_passes = std::max(1L, std::atol(v));
    if (const char* v = std::getenv("CUDASIM_SCHEDULES"))
      if (!parse_schedules(*x, v))
        std::fprintf(stderr, "cudasim: ignoring CUDASIM_SCHEDULES=%s (expected e.g. forward,reverse,random)\n", v);
    return x;
  }();
  return *o;
}

namespace detail {
static std::atomic<uint64_t> g_launches{0};
static std::atomic<uint64_t> g_kernel_ns{0};
}  // namespace detail

Stats stats() {
  Stats s;
  s.launches = detail::g_launches.load();
  s.kernel_seconds = double(detail::g_kernel_ns.load()) * 1e-9;
  s.threads = detail::threads_run_count();
  s.switches = detail::fiber_switch_count();
  s.uninstrumented = detail::uninstrumented_build();
  return s;
}

const char* fiber_backend() { return detail::fiber_name(); }

namespace detail {

void managed_before_launch();  // memory.cpp

std::atomic<int> g_schedule_index{0};
static bool g_atomic_note_given = false;

static std::string dim3_str(dim3 d) {
  if (d.y == 1 && d.z == 1) return strf("%u", d.x);
  return strf("(%u, %u, %u)", d.x, d.y, d.z);
}

// Returns "" or why CUDA would refuse this configuration.
static std::string config_problem(dim3 g, dim3 b, size_t shmem) {
  unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
  if (threads == 0 || g.x == 0 || g.y == 0 || g.z == 0) return "a grid or block dimension is 0";
  if (threads > 1024) return strf("%llu threads per block; the limit is 1024", threads);
  if (b.x > 1024 || b.y > 1024 || b.z > 64) return "block dimensions exceed (1024, 1024, 64)";
  if (g.y > 65535 || g.z > 65535) return "grid y or z dimension exceeds 65535";
  if (shmem > 48 * 1024) return strf("%zu bytes of dynamic shared memory; the limit is 49152 bytes (48 KiB) per block", shmem);
  return "";
}

// ---- device printf: a FIFO of cudaLimitPrintfFifoSize bytes per launch ----------------------------
//
// A GPU writes each printf record into a circular buffer that the host prints when it synchronises;
// output beyond its size overwrites the oldest records (the CUDA Programming Guide, "Formatted
// Output"). The simulator keeps a launch's records (its formatted text) in such a buffer and prints
// them at the end of the launch, or before an error report ends the program, then says what was
// lost. A printf loop of millions of lines thus costs formatting, not terminal time.

namespace {
constexpr size_t kDefaultPrintfFifo = size_t(1) << 20;  // 1 MiB, CUDA's documented default
struct PrintfFifo {
  std::mutex mu;
  size_t limit = kDefaultPrintfFifo;
  std::deque<std::string> records;
  size_t bytes = 0;                       // of the records kept
  size_t lost_bytes = 0, lost_lines = 0, lost_records = 0;
  bool used = false;                      // a launch has printed: the limit is fixed from then on (CUDA)
};
PrintfFifo& printf_fifo() {
  static PrintfFifo* f = new PrintfFifo;  // never destroyed: fatal() may flush it during exit
  return *f;
}
}  // namespace

void printf_fifo_put(std::string text) {
  PrintfFifo& f = printf_fifo();
  std::lock_guard<std::mutex> lock(f.mu);
  f.used = true;
  f.bytes += text.size();
  f.records.push_back(std::move(text));
  while (f.bytes > f.limit && !f.records.empty()) {
    const std::string& old = f.records.front();
    f.bytes -= old.size();
    f.lost_bytes += old.size();
    f.lost_lines += size_t(std::count(old.begin(), old.end(), '\n'));
    ++f.lost_records;
    f.records.pop_front();
  }
}

// Prints the records kept and, when some were lost, one note on stderr. `site` is the launch, or
// null when an error report is about to end the program.
void printf_fifo_flush(const LaunchSite* site) {
  PrintfFifo& f = printf_fifo();
  std::unique_lock<std::mutex> lock(f.mu, std::defer_lock);
  if (site) {
    lock.lock();
  } else {
    // Before an error report, maybe from the watchdog while a simulated thread is mid-printf: wait
    // a little for it, but never let the report hang on it.
    for (int i = 0; i < 50 && !lock.try_lock(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!lock.owns_lock()) return;
  }
  OwnCalls own;  // the simulator's output, also from a simulated thread (host_calls.cpp)
  for (const std::string& r : f.records) std::fwrite(r.data(), 1, r.size(), stdout);
  f.records.clear();
  f.bytes = 0;
  if (f.lost_records) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "cudasim: note: %s printed more than the %zu-byte printf buffer holds: the first %zu printf record%s "
                 "(%zu line%s, %zu bytes) were overwritten and not printed, as on a GPU, whose printf buffer is circular. "
                 "To keep more, call cudaDeviceSetLimit(cudaLimitPrintfFifoSize, bytes) before the first launch.\n",
                 site ? kernel_str(*site).c_str() : "the kernel", f.limit, f.lost_records, f.lost_records == 1 ? "" : "s",
                 f.lost_lines, f.lost_lines == 1 ? "" : "s", f.lost_bytes);
    f.lost_bytes = f.lost_lines = f.lost_records = 0;
  }
  std::fflush(stdout);
}

void launch(const LaunchSite& site, dim3 grid, dim3 block, size_t shmem, Invoke invoke, const void* args, const ArgCheck* ptr_args,
            int n_ptr_args) {
  // The launch's printf output goes out when it returns, however it returns.
  struct FlushPrintf {
    const LaunchSite* s;
    ~FlushPrintf() { printf_fifo_flush(s); }
  } flush_printf{&site};
  uint64_t launch_no = g_launches.fetch_add(1) + 1;
  std::string problem = config_problem(grid, block, shmem);
  if (!problem.empty()) {
    std::fprintf(stderr, "cudasim: %s: launch of %s<<<%s, %s, %zu>>> failed: %s. The kernel did not run.\n",
                 where(site.file, site.line).c_str(), site.kernel, dim3_str(grid).c_str(), dim3_str(block).c_str(), shmem,
                 problem.c_str());
    set_last_error(cudaErrorInvalidConfiguration);
    return;
  }
  for (int i = 0; i < n_ptr_args; ++i) {
    const void* p = ptr_args[i].ptr;
    if (p && !find_alloc(p, 1)) {
      Diagnosis diag{Kind::bad_pointer_argument};
      std::string d = describe_address(reinterpret_cast<uintptr_t>(p), &diag.kind, &diag.facts);
      diag.sites.push_back(where(site.file, site.line));
      // "argument": its place from 1; "address": its value. A pointer into the device arena that no
      // live buffer holds is an out-of-bounds or freed address (describe_address chose the kind).
      launch_facts(diag.facts, site, grid, block);
      diag.facts.set("case", "argument").set("argument", ptr_args[i].index + 1).set("address", strf("%p", p));
      ErrorRec e{diag,
                 strf("%s: argument %d of the kernel is %p, which is not device memory%s%s.\n"
                      "  A kernel can only dereference memory from cudaMalloc: copy host data there with cudaMemcpy and pass the "
                      "device pointer.",
                      kernel_str(site).c_str(), ptr_args[i].index + 1, p, d.empty() ? " (a host address?)" : ": ", d.c_str())};
      report_kernel_error(e);
      return;
    }
  }
  const Options& o = options();
  int count = o.schedule_count;
  struct Timer {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timer() {
      g_kernel_ns.fetch_add(uint64_t(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count()));
    }
  } timer;
  struct Access {
    Access() { device_access(true); }
    ~Access() { device_access(false); }
  } access;
  // The kernel's pointer parameters by name, for reports ("out[3]" rather than "buffer #2").
  std::vector<std::string> pnames;
  {
    std::string all = site.params ? site.params : "";
    size_t pos = 0;
    while (pos <= all.size()) {
      size_t c = all.find(',', pos);
      pnames.push_back(all.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  // cu2cpp marks a `const T* __restrict__` parameter's name with "!".
  std::vector<unsigned char> restricted(pnames.size(), 0);
  for (size_t k = 0; k < pnames.size(); ++k)
    if (!pnames[k].empty() && pnames[k][0] == '!') {
      pnames[k].erase(0, 1);
      restricted[k] = 1;
    }
  std::vector<const void*> aptr;
  std::vector<const char*> aname;
  std::vector<unsigned char> aro;
  for (int i = 0; i < n_ptr_args; ++i) {
    aptr.push_back(ptr_args[i].ptr);
    int k = ptr_args[i].index;
    aname.push_back(k < (int)pnames.size() && !pnames[k].empty() ? pnames[k].c_str() : nullptr);
    aro.push_back(k < (int)restricted.size() ? restricted[k] : 0);
  }
  managed_before_launch();
  Snapshot before, first;
  // A big launch is checked on a sample of its blocks (sampling.cpp); a finding there runs the
  // checked schedule again on every block (`full`), from the memory it started from.
  const bool sampled = o.checks && launch_sampled(uint64_t(grid.x) * grid.y * grid.z, uint64_t(block.x) * block.y * block.z);
  bool full = !sampled, rerun = false;
  if (count > 1 || sampled) snapshot_take(before);
  for (int s = 0; s < count; ++s) {
    if (s > 0) snapshot_restore(before);
    Grid g;
    g.site = site;
    g.grid = grid;
    g.block = block;
    g.shmem = shmem;
    g.invoke = invoke;
    g.args = args;
    g.schedule = o.schedules[s];
    g.schedule_index = s;
    g.checking = s == 0 && o.checks;
    g.observed = g.checking || profiles(s);
    // Every schedule of a checked launch runs on one worker with polling watched: which blocks run
    // side by side then never depends on CUDASIM_WORKERS (scheduler.h, watch_spin).
    g.spin_watch = o.checks;
    // The 'random' schedule of a checked launch also runs its blocks side by side (workers.cpp).
    // Not when some shared memory is per OS thread (cu2cpp's note): blocks taking turns would share it.
    g.interleave = o.checks && !g.observed && g.schedule == Schedule::Random && !thread_local_shared_used();
    // A sampled launch: the checked run checks the sample; the other orders run on every core.
    if (sampled && s > 0) g.spin_watch = g.interleave = false;
    if (g.checking && !full) choose_sample(g, launch_no, &before);
    uninstrumented_launch_check(g.observed || g.spin_watch);
    g.seed = o.seed * 0x9E3779B97F4A7C15ull + launch_no;
    g_schedule_index.store(rerun ? 1 : s);  // (a checked run again prints nothing again)
    Observers::launch_begin(LaunchBegin{g, aptr.data(), aname.data(), (int)aptr.size(), aro.data()});
    g_observed_launch = g.observed || g.spin_watch;
    run_grid(g);
    g_observed_launch = false;
    Observers::launch_end(g);
    g_schedule_index.store(0);
    Diagnosis checked;
    std::string found = check_launch_end(g, &checked);
    if (!g.sample.empty() && (g.err.code || !found.empty())) {
      note_full_recheck(site);
      full = rerun = true;
      snapshot_restore(before);
      --s;
      continue;
    }
    if (!g.sample.empty()) unchecked_writes_done(before);
    if (g.err.code) {
      g.err.diagnosis.interleaved = g.interleave;
      // "found_in_schedule": the thread schedule that found it, when not the first (checked) one; "also":
      // the memory checker's own diagnosis of the same run, a whole record.
      if (count > 1 && !g.checking) {
        g.err.message += strf("\n  (found while running the '%s' thread schedule)", schedule_name(g.schedule));
        g.err.diagnosis.facts.set("found_in_schedule", schedule_name(g.schedule));
      }
      if (!found.empty()) {
        g.err.diagnosis.facts.set_json("also", record_json(checked, found));
        // The second report is part of the first: indent it under "also found".
        std::string indented;
        size_t at = 0;
        while (at < found.size()) {
          size_t end = found.find('\n', at);
          if (end == std::string::npos) end = found.size();
          if (end > at) indented += "    " + found.substr(at, end - at);
          if (end < found.size()) indented += "\n";
          at = end + 1;
        }
        g.err.message += "\n  The memory checker also found:\n" + indented;
      }
      report_kernel_error(g.err);
      return;
    }
    if (!found.empty()) {
      ErrorRec e{checked, found};
      report_kernel_error(e);
      return;
    }
    std::string oob = check_canaries();
    if (!oob.empty()) {
      ErrorRec e{Diagnosis{Kind::out_of_bounds},
                 strf("out-of-bounds write in %s: %s.\n  Guard every global store with a bounds check such as "
                      "`if (i < n)`; the last block usually has threads past the end of the data.",
                      kernel_str(site).c_str(), oob.c_str())};
      report_kernel_error(e);
      return;
    }
    if (count > 1 && s == 0) snapshot_take(first, &before);
    if (s > 0) {
      size_t atomic_only = 0;
      // The schedule that ran blocks side by side (Grid::interleave): a difference that only it
      // shows depends on how blocks interleave, which the orders of one block at a time never show.
      const bool interleaved = g.interleave;
      const std::string interleaved_note = strf(
          "\n  The '%s' order also runs several blocks side by side, taking turns at barriers and polls, as a GPU does. If "
          "the answer is wrong after it, a block used a value that another block changed before it was done: an update "
          "computed from an earlier read and stored with atomicExch (make it one atomicAdd), or a wait for another block "
          "that gives up after a few polls (poll until the flag is set).",
          schedule_name(o.schedules[s]));
      std::string buffers;  // the differences as data, for the diagnosis record
      std::string diff = snapshot_diff(first, schedule_name(o.schedules[0]), schedule_name(o.schedules[s]), &atomic_only, &buffers);
      if (atomic_only && !g_atomic_note_given) {
        g_atomic_note_given = true;
        const std::string english = strf(
            "%s: %zu element%s that only atomics wrote came out different under the '%s' and '%s' "
            "thread orders (counting plain stores by threads that had used an atomic: an index taken with "
            "atomicAdd, out[atomicAdd(&n, 1)] = x, or a value computed under a lock). That is not a race: atomics "
            "run in any order, so a float sum rounds differently, the last atomicExch/atomicCAS wins and an index "
            "or a lock goes to another thread first. Compare such results with a tolerance, or as a set.%s",
            kernel_str(site).c_str(), atomic_only, atomic_only == 1 ? "" : "s", schedule_name(o.schedules[0]),
            schedule_name(o.schedules[s]), interleaved ? interleaved_note.c_str() : "");
        Facts f;
        f.set("kernel", site.kernel).set("launch_site", where(site.file, site.line)).set("count", atomic_only)
            .set("first", schedule_name(o.schedules[0])).set("second", schedule_name(o.schedules[s]));
        say_note(interleaved ? "atomics_differ_interleaved" : "atomics_differ", english,
                 interleaved
                     ? "kernel {kernel} (launched at {launch_site}): {count} elements that only atomics wrote came out "
                       "different under the '{first}' and '{second}' thread orders (counting plain stores by threads that "
                       "had used an atomic: an index taken with atomicAdd, out[atomicAdd(&n, 1)] = x, or a value computed "
                       "under a lock). That is not a race: atomics run in any order, so a float sum rounds differently, the "
                       "last atomicExch/atomicCAS wins and an index or a lock goes to another thread first. Compare such "
                       "results with a tolerance, or as a set.\n  The '{second}' order also runs several blocks side by "
                       "side, taking turns at barriers and polls, as a GPU does. If the answer is wrong after it, a block "
                       "used a value that another block changed before it was done: an update computed from an earlier "
                       "read and stored with atomicExch (make it one atomicAdd), or a wait for another block that gives up "
                       "after a few polls (poll until the flag is set)."
                     : "kernel {kernel} (launched at {launch_site}): {count} elements that only atomics wrote came out "
                       "different under the '{first}' and '{second}' thread orders (counting plain stores by threads that "
                       "had used an atomic: an index taken with atomicAdd, out[atomicAdd(&n, 1)] = x, or a value computed "
                       "under a lock). That is not a race: atomics run in any order, so a float sum rounds differently, the "
                       "last atomicExch/atomicCAS wins and an index or a lock goes to another thread first. Compare such "
                       "results with a tolerance, or as a set.",
                 f);
      }
      if (!diff.empty()) {
        // The interleaved schedule differs from the first in how blocks run as well: say so first.
        const std::string orders =
            interleaved ? strf("'%s' order and in '%s' order (which also runs up to four blocks side by side, taking turns at "
                               "barriers and polls, as blocks share a GPU)",
                               schedule_name(o.schedules[0]), schedule_name(o.schedules[s]))
                        : strf("'%s' order and in '%s' order", schedule_name(o.schedules[0]), schedule_name(o.schedules[s]));
        const char* between =
            interleaved ? "  Between blocks: a block that reads what another block writes during the launch must wait for it (a "
                          "flag set after a release, read with an acquire) and use exactly what it waited for. A look-back that "
                          "adds more tiles than the nearest inclusive prefix, that gives up after a few polls, or an update "
                          "computed from an earlier read and stored with atomicExch changes with how blocks interleave.\n"
                        : "";
        Diagnosis d{Kind::race_schedule};
        d.interleaved = interleaved;
        d.facts.set("kernel", site.kernel).set("launch_site", where(site.file, site.line));
        d.facts.set("schedule_first", schedule_name(o.schedules[0])).set("schedule_second", schedule_name(o.schedules[s]));
        d.facts.set_json("buffers", "[" + buffers + "]");
        ErrorRec e{d,
                   strf("race in %s: the result depends on the order in which threads run%s (or on what uninitialized memory "
                        "holds: each order fills it differently).\n"
                        "  Running the threads of each barrier interval in %s wrote different values:\n%s%s"
                        "  Some thread reads memory that another thread writes without a barrier between them (within a block: "
                        "separate the read and the write with __syncthreads(), or use a second buffer), or one block reads what "
                        "another block writes in the same launch (split the work into two kernel launches).\n"
                        "  This includes threads of one warp: since Volta they do not run in lockstep, so the 2007 'volatile "
                        "last warp' idiom is a race too; put __syncwarp() between its read and write, or use __shfl_down_sync().",
                        kernel_str(site).c_str(), interleaved ? " or blocks interleave" : "", orders.c_str(), diff.c_str(),
                        between)};
        report_kernel_error(e);
        return;
      }
    }
  }
}

}  // namespace detail
}  // namespace cudasim

using namespace cudasim::detail;

int cudasim_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (!tl_thread) {  // host code prints at once
    int r = std::vprintf(fmt, ap);
    va_end(ap);
    return r;
  }
  // Each launch runs once per schedule; only the first run prints, so output appears once.
  if (g_schedule_index.load() != 0) {
    va_end(ap);
    return 0;
  }
  char small[256];
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  std::string text;
  if (n >= int(sizeof small)) {
    text.resize(size_t(n) + 1);
    std::vsnprintf(&text[0], text.size(), fmt, again);
    text.resize(size_t(n));
  } else if (n > 0) {
    text.assign(small, size_t(n));
  }
  va_end(again);
  if (n > 0) printf_fifo_put(std::move(text));
  return n;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }  // kernels run synchronously
cudaError_t cudaDeviceReset() { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return cudaErrorInvalidValue;
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "cudasim CPU simulator (%s fibers)", cudasim::fiber_backend());
  p->totalGlobalMem = size_t(8) << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  // One "SM" per core, unless CUDASIM_SM_COUNT names a GPU's (kernels that size their grid by the
  // SM count then launch what they launch there: scripts/ncu_compare.py compares with an H200).
  p->multiProcessorCount = (int)std::max(1u, std::thread::hardware_concurrency());
  if (const char* v = std::getenv("CUDASIM_SM_COUNT"))
    if (std::atoi(v) > 0) p->multiProcessorCount = std::atoi(v);
  p->major = 9;
  p->minor = 0;
  p->clockRate = 1000000;  // kHz: device clock() counts 1000 per read (see device_clock)
  p->totalConstMem = 64 * 1024;
  p->sharedMemPerMultiprocessor = 228 * 1024;
  p->regsPerMultiprocessor = 65536;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = 32;
  p->computeMode = cudaComputeModeDefault;
  p->canMapHostMemory = 0;
  p->concurrentKernels = 0;  // launches run one after the other
  p->deviceOverlap = 0;
  p->asyncEngineCount = 0;
  p->unifiedAddressing = 1;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 0;  // host code must not touch managed memory while a kernel runs
  p->cooperativeLaunch = 0;        // no grid-wide synchronization
  p->memPitch = size_t(1) << 31;
  p->textureAlignment = 512;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  cudaDeviceProp p;
  if (!value || cudaGetDeviceProperties(&p, device) != cudaSuccess) return cudaErrorInvalidValue;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeMode: *value = p.computeMode; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
    case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMemoryClockRate: *value = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    default: *value = 0; break;  // integrated, ECC, PCI ids, timeouts, host mapping: none
  }
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  *free_bytes = *total_bytes = p.totalGlobalMem;
  return cudaSuccess;
}
// The cudaLimit values, as an H200 reports them (cudaDeviceGetLimit on CUDA 12), except the printf
// FIFO: CUDA documents 1 MiB as its default, and the simulator keeps that.
namespace {
size_t g_limits[7] = {1024, 0, 8u << 20, 0, 2048, 64, 0};
bool limit_supported(cudaLimit l) {
  // cudaLimitDevRuntimeSyncDepth: device-side cudaDeviceSynchronize is gone on compute capability 9.0.
  return int(l) >= 0 && int(l) < 7 && l != cudaLimitDevRuntimeSyncDepth;
}
}  // namespace

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  if (!value) return cudaErrorInvalidValue;
  if (!limit_supported(limit)) return cudaErrorUnsupportedLimit;
  if (limit == cudaLimitPrintfFifoSize) {
    PrintfFifo& f = printf_fifo();
    std::lock_guard<std::mutex> lock(f.mu);
    *value = f.limit;
  } else {
    *value = g_limits[limit];
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  if (!limit_supported(limit)) return cudaErrorUnsupportedLimit;
  if (limit == cudaLimitPrintfFifoSize) {
    PrintfFifo& f = printf_fifo();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.used) {
      std::fprintf(stderr, "cudasim: cudaDeviceSetLimit(cudaLimitPrintfFifoSize, %zu) after a kernel that called printf: "
                           "CUDA fixes the printf buffer at the first such launch; set it before (returns "
                           "cudaErrorInvalidValue)\n", value);
      set_last_error(cudaErrorInvalidValue);
      return cudaErrorInvalidValue;
    }
    f.limit = value;
  } else {
    g_limits[limit] = value;
  }
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned) { return cudaSuccess; }
cudaError_t cudaGetDeviceFlags(unsigned* f) {
  *f = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaProfilerStart() { return cudaSuccess; }
cudaError_t cudaProfilerStop() { return cudaSuccess; }

namespace cudasim {
namespace detail {
int occupancy_blocks(int block_size, size_t dyn_shared) {
  if (block_size <= 0 || block_size > 1024 || dyn_shared > 48 * 1024) return 0;
  int warps = (block_size + 31) / 32;
  int by_threads = 64 / warps;  // 2048 threads = 64 warps per multiprocessor
  int by_shared = dyn_shared ? int((228 * 1024) / (dyn_shared + 1024)) : 32;  // 1 KiB reserved per block, as on sm_90
  return std::max(0, std::min(std::min(by_threads, by_shared), 32));
}
int default_block_size(int limit) { return limit > 0 && limit < 1024 ? std::max(32, limit / 32 * 32) : 1024; }
}  // namespace detail
}  // namespace cudasim
cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = nullptr;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
// Streams are one synchronous queue: everything has finished when a call returns.
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return cudaStreamCreate(s); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned, int) { return cudaStreamCreate(s); }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }

struct CUevent_st {
  std::chrono::steady_clock::time_point t;
};
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st();
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInvalidPitchValue: return "cudaErrorInvalidPitchValue";
    case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorUnsupportedLimit: return "cudaErrorUnsupportedLimit";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorUnsupportedLimit: return "limit is not supported on this architecture";
    default: return "unknown error";
  }
}

// How the simulator reports: formatting, kernel errors, crashes (signals), and the watchdog that
// turns a runaway thread into a message instead of a hang.
#include <dlfcn.h>
#include <signal.h>
#if defined(__APPLE__)
#include <sys/ucontext.h>  // macOS's <ucontext.h> refuses to be included without _XOPEN_SOURCE
#else
#include <ucontext.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "internal.h"

namespace cudasim {

static ErrorMode g_mode = ErrorMode::Exit;
static void (*g_hook)(const DiagnosisView&) = nullptr;
void set_error_mode(ErrorMode m) { g_mode = m; }
void set_fatal_hook(void (*hook)(const DiagnosisView&)) { g_hook = hook; }

namespace detail {

struct KindRow {
  const char* name;
  int code;
  const char* category;
};
static constexpr KindRow kKinds[] = {
#define CUDASIM_KIND_ROW(name, code, category) {#name, code, category},
    CUDASIM_DIAGNOSIS_KINDS(CUDASIM_KIND_ROW)
#undef CUDASIM_KIND_ROW
};

const char* kind_name(Kind k) { return kKinds[size_t(k)].name; }
int kind_code(Kind k) { return kKinds[size_t(k)].code; }
const char* kind_category(Kind k) { return kKinds[size_t(k)].category; }

std::vector<Worker*> all_workers();

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[1024];
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < (int)sizeof buf) return std::string(buf, n > 0 ? n : 0);
  std::string s(n + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(&s[0], s.size(), fmt, ap);
  va_end(ap);
  s.resize(n);
  return s;
}

std::string where(const char* file, int line) {
  if (!file) return "?";
  static std::string cwd = [] {
    char b[PATH_MAX];
    return getcwd(b, sizeof b) ? std::string(b) + "/" : std::string();
  }();
  int l = line;
  std::string f = user_site(file, &l);  // a translated copy names the user's file (symbols.cpp)
  if (!cwd.empty() && f.compare(0, cwd.size(), cwd) == 0) f = f.substr(cwd.size());
  return strf("%s:%d", f.c_str(), l);
}

std::string dim_str(uint3 v, dim3 extent) {
  if (extent.y == 1 && extent.z == 1) return strf("%u", v.x);
  return strf("(%u, %u, %u)", v.x, v.y, v.z);
}

std::string ranges(const std::vector<unsigned>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? strf("%u", ids[i]) : strf("%u-%u", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

std::string ranges_json(const std::vector<unsigned>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += strf("%s[%u, %u]", out.empty() ? "" : ", ", ids[i], ids[j]);
    i = j + 1;
  }
  return "[" + out + "]";
}

// ---- the diagnosis record -------------------------------------------------------------------------

std::string json_quote(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += char(c);
    else if (c == '\n') r += "\\n";
    else if (c == '\t') r += "\\t";
    else if (c < 0x20) r += strf("\\u%04x", c);
    else r += char(c);
  }
  return r + "\"";
}

std::string json_uint3(uint3 v) { return strf("[%u, %u, %u]", v.x, v.y, v.z); }

Facts& Facts::raw(const char* name, const std::string& json) {
  if (!body_.empty()) body_ += ", ";
  body_ += json_quote(name) + ": " + json;
  return *this;
}
Facts& Facts::set(const char* name, const std::string& value) { return raw(name, json_quote(value)); }
Facts& Facts::set(const char* name, const char* value) { return raw(name, value ? json_quote(value) : "null"); }
Facts& Facts::set(const char* name, long long value) { return raw(name, std::to_string(value)); }
Facts& Facts::set(const char* name, bool value) { return raw(name, value ? "true" : "false"); }
Facts& Facts::set(const char* name, uint3 value) { return raw(name, json_uint3(value)); }
Facts& Facts::set_json(const char* name, const std::string& json) { return raw(name, json); }

std::string record_json(const Diagnosis& d, const std::string& message) {
  std::string sites, threads;
  for (const std::string& s : d.sites) sites += (sites.empty() ? "" : ", ") + json_quote(s);
  for (const uint3& t : d.threads) threads += (threads.empty() ? "" : ", ") + json_uint3(t);
  return "{\"kind\": " + json_quote(kind_name(d.kind)) + ", \"category\": " + json_quote(kind_category(d.kind)) +
         ", \"code\": " + std::to_string(kind_code(d.kind)) + ", \"sites\": [" + sites + "], \"block\": " +
         (d.has_block ? json_uint3(d.block) : "null") + ", \"threads\": [" + threads + "], \"detail\": " +
         (d.detail.empty() ? "null" : json_quote(d.detail)) + ", \"interleaved\": " + (d.interleaved ? "true" : "false") +
         ", \"message\": " + json_quote(message) + ", \"facts\": " + d.facts.json() + "}";
}

void say_note(const char* key, const std::string& english, const char* text, const Facts& facts) {
  static const bool as_data = [] {
    const char* v = std::getenv("PUZZLES_DRIVER_TEXT");
    return v && std::strcmp(v, "data") == 0;
  }();
  if (as_data)
    std::fprintf(stderr, "SAY {\"key\": %s, \"text\": %s%s%s}\n", json_quote(key).c_str(),
                 json_quote(std::string("cudasim: note: ") + text).c_str(), facts.empty() ? "" : ", ", facts.body().c_str());
  else
    std::fprintf(stderr, "cudasim: note: %s\n", english.c_str());
  std::fflush(stderr);
}

std::string kernel_str(const LaunchSite& s) { return strf("kernel %s (launched at %s)", s.kernel, where(s.file, s.line).c_str()); }

void launch_facts(Facts& f, const LaunchSite& s, dim3 grid, dim3 block) {
  f.set("kernel", s.kernel).set("launch_site", where(s.file, s.line));
  f.set("grid_dim", uint3{grid.x, grid.y, grid.z}).set("block_dim", uint3{block.x, block.y, block.z});
}
void launch_facts(Facts& f, const Grid& g) { launch_facts(f, g.site, g.grid, g.block); }

__thread int tl_own_calls = 0;

void fatal(const Diagnosis& d, const std::string& message) {
  // The process ends here, maybe on a simulated thread (a crash, the watchdog): the hook's and
  // _exit's host calls are the simulator's own (host_calls.cpp).
  OwnCalls own;
  printf_fifo_flush(nullptr);  // the failing launch's printf output comes before the report, as a learner expects
  // `puzzle.py sim` words the report itself, in the learner's language: it names a file for the
  // record, and the English text is not printed.
  const char* record_file = std::getenv("CUDASIM_RECORD_FILE");
  FILE* rf = record_file && *record_file ? std::fopen(record_file, "w") : nullptr;
  if (rf) {
    std::fputs(record_json(d, message).c_str(), rf);
    std::fclose(rf);
  } else {
    std::fprintf(stderr, "cudasim: error: %s\n", message.c_str());
  }
  std::fflush(stderr);
  if (g_hook) {
    const std::string record = record_json(d, message);
    DiagnosisView v{kind_code(d.kind), kind_name(d.kind), record.c_str()};
    g_hook(v);
  }
  std::fflush(stdout);
  _exit(kind_code(d.kind));
}

void out_of_memory(const char* what, const std::string& message) {
  Diagnosis d{Kind::out_of_memory};
  d.facts.set("what", what);
  fatal(d, message);
}

void report_kernel_error(const ErrorRec& e) {
  if (g_mode == ErrorMode::Throw) {
    KernelError k;
    k.code = e.code;
    k.kind = kind_category(e.diagnosis.kind);
    k.diagnosis = kind_name(e.diagnosis.kind);
    std::snprintf(k.message, sizeof k.message, "%s", e.message.c_str());
    throw k;
  }
  fatal(e.diagnosis, e.message);
}

std::string describe_current_thread() {
  Worker* w = tl_worker;
  if (!w || !tl_thread || !w->grid) return "";
  return strf("%s, block %s, thread %s", kernel_str(w->grid->site).c_str(), dim_str(w->block.bid, w->block.gdim).c_str(),
              dim_str(tl_thread->tid, w->block.bdim).c_str());
}

static bool stack_guard_hit(uintptr_t addr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (Worker* w : all_workers())
    for (void* lo : w->stacks) {
      uintptr_t l = reinterpret_cast<uintptr_t>(lo);
      if (addr >= l - page && addr < l) return true;
    }
  return false;
}

static Worker* dynamic_shared_guard_hit(uintptr_t addr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (Worker* w : all_workers()) {
    uintptr_t g = reinterpret_cast<uintptr_t>(w->dyn_guard);
    if (g && addr >= g && addr < g + page) return w;
  }
  return nullptr;
}

static const SharedArray* static_shared_guard_hit(uintptr_t addr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  Worker* w = tl_worker;
  if (!w || !w->sh_guard || w->shared_arrays.empty()) return nullptr;
  uintptr_t g = reinterpret_cast<uintptr_t>(w->sh_guard);
  return addr >= g && addr < g + page ? &w->shared_arrays.front() : nullptr;
}

// The program counter of the context a signal interrupted, where the platform says; null elsewhere.
static void* context_pc(void* uctx) {
#if defined(__linux__) && defined(__x86_64__)
  return reinterpret_cast<void*>(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__linux__) && defined(__aarch64__)
  return reinterpret_cast<void*>(static_cast<ucontext_t*>(uctx)->uc_mcontext.pc);
#elif defined(__APPLE__) && defined(__aarch64__)
  return reinterpret_cast<void*>(static_cast<ucontext_t*>(uctx)->uc_mcontext->__ss.__pc);
#elif defined(__APPLE__) && defined(__x86_64__)
  return reinterpret_cast<void*>(static_cast<ucontext_t*>(uctx)->uc_mcontext->__ss.__rip);
#else
  (void)uctx;
  return nullptr;
#endif
}

static void on_crash(int sig, siginfo_t* si, void* uctx) {
  void* pc = context_pc(uctx);
  uintptr_t addr = reinterpret_cast<uintptr_t>(si->si_addr);
  std::string thread = describe_current_thread();
  std::string what;
  static const char* const kIndexAdvice =
      "Check the index against the buffer's size: every thread past the end of the data must skip its loads and stores.";
  const char* advice = nullptr;  // for a crash in a kernel
  bool overflow = false;
  Diagnosis diag;
  diag.kind = thread.empty() ? Kind::crash_host : Kind::crash_device;
  if (sig == SIGFPE) {
    diag.kind = Kind::arithmetic;
    what = "arithmetic error (integer division by zero?)";
  } else if (Worker* w = dynamic_shared_guard_hit(addr)) {
    diag.kind = Kind::out_of_bounds;
    what = strf("out-of-bounds access to shared memory: byte %zu of dynamic shared memory, but the launch asked for %zu bytes "
                "(the third <<<>>> argument)", size_t(addr - reinterpret_cast<uintptr_t>(w->dyn_start)), w->dyn_bytes);
    advice = kIndexAdvice;
  } else if (const SharedArray* a = static_shared_guard_hit(addr)) {
    diag.kind = Kind::out_of_bounds;
    what = strf("out-of-bounds access to shared memory: byte %zu of __shared__ %s, which has %zu bytes (declared at %s)",
                size_t(addr - reinterpret_cast<uintptr_t>(a->p)), a->name, a->bytes, where(a->file, a->line).c_str());
    advice = kIndexAdvice;
  } else if ((overflow = stack_guard_hit(addr))) {
    diag.kind = Kind::stack_overflow;
    diag.facts.set("stack_kb", options().stack_bytes / 1024);
    what = "stack overflow: the thread's local variables exceed the simulator's stack (set CUDASIM_STACK_KB to raise it)";
  } else {
    std::string d = describe_address(addr, &diag.kind, &diag.facts);
    const Alloc* host_deref = thread.empty() ? find_alloc(reinterpret_cast<void*>(addr)) : nullptr;
    if (host_deref && is_managed_alloc(host_deref) && device_to_host_copies_forbidden()) {
      // A launcher's host code touched managed memory while a case runs (memory.cpp, protect). A
      // write (initialising a counter) is allowed: the buffer opens until the next launch and the
      // instruction runs again. A read would let the launcher compute the answer on the CPU.
      bool write = false;
#if defined(__linux__) && defined(__x86_64__)
      write = (static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page fault's W bit
#endif
      if (write) {
        open_managed_for_host(*host_deref);
        return;
      }
      diag.kind = Kind::host_copy_in_launcher;
      diag.detail = "a read of cudaMallocManaged memory in host code";
      diag.facts.set("case", "managed_read").set_json("buffer", alloc_json(*host_deref));
      what = "the launcher read managed memory (" + alloc_str(*host_deref) +
             ") in host code while the case ran. A puzzle's answer must be computed by its kernels: the driver reads the "
             "output itself after the launcher returns, and an answer computed on the CPU does not count. Leave the "
             "values in device memory and launch another kernel on them; to look at values while debugging, printf from a "
             "kernel";
    } else if (host_deref) {
      diag.kind = Kind::crash_host;
      diag.facts.set("case", "device_memory").set_json("buffer", alloc_json(*host_deref));
      what = "host code dereferenced device memory (" + alloc_str(*host_deref) +
             "). A device pointer is only valid inside kernels: copy the data to a host array with cudaMemcpy first";
    } else if (!d.empty()) {
      what = "invalid access to " + d;
      advice = diag.kind == Kind::use_after_free
                   ? "The buffer was released before this launch: call cudaFree only after the last kernel that uses it."
                   : kIndexAdvice;
    } else if (addr < 4096) {
      diag.kind = Kind::null_dereference;
      diag.facts.set("address", strf("%p", si->si_addr));
      what = "null pointer dereference";
      advice = "A pointer the kernel used is null: check the arguments of the launch (every pointer must come from "
               "cudaMalloc, and be allocated before the launch) and any pointer the kernel computes or loads.";
    } else {
      diag.facts.set("case", "not_device_memory").set("address", strf("%p", si->si_addr));
      what = strf("invalid access to address %p, which is not in any device buffer", si->si_addr);
      advice = "A kernel can only use device memory: pass pointers from cudaMalloc, not host arrays (copy the data over "
               "with cudaMemcpy), and check pointers the kernel computes or loads (an uninitialized one holds garbage).";
    }
  }
  // "frames": where it crashed, innermost first (the message's "at ..." lines); "in": "kernel" or
  // "host", with the launch's facts for a kernel.
  const std::vector<SourceFrame> frames = source_frames(pc);
  std::string src = source_text(frames);
  if (!line_of_source(src).empty()) diag.sites.push_back(line_of_source(src));
  diag.facts.set_json("frames", frames_json(frames)).set("in", thread.empty() ? "host" : "kernel");
  if (Worker* w = tl_worker; w && tl_thread && w->grid) {
    diag.has_block = true;
    diag.block = w->block.bid;
    diag.threads.push_back(tl_thread->tid);
    launch_facts(diag.facts, *w->grid);
  }
  std::string msg = (diag.kind == Kind::host_copy_in_launcher ? std::string()
                     : thread.empty()                          ? std::string("crash in host code: ")
                                                               : "crash in " + thread + ": ") +
                    what + ".";
  if (!src.empty()) msg += "\n  at " + src;
  if (!thread.empty() && advice) msg += std::string("\n  ") + advice;
  fatal(diag, msg);
}

void install_crash_handlers() {
  // The handler runs on its own stack: a fiber's stack may be the thing that overflowed.
  static thread_local std::vector<char> alt(64 * 1024);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    sigaction(SIGFPE, &sa, nullptr);
  });
}

static const int g_main_handlers = (install_crash_handlers(), 0);

// Where a runaway thread runs. The watchdog cannot read the registers of a fiber that is running,
// so it interrupts the OS thread that runs it with SIGURG (whose default action is to do nothing)
// and the handler records the program counter it interrupted. A loop that never reaches a barrier
// may touch no memory at all (`while (x != target) x += 2;`, or a plain flag read once and kept in
// a register), so the last access the checker saw could be a line before the loop, or none.
static std::atomic<void*> g_sampled_pc{nullptr};
static std::atomic<unsigned> g_samples{0};

static void on_sample(int, siginfo_t*, void* uctx) {
  g_sampled_pc.store(context_pc(uctx), std::memory_order_relaxed);
  g_samples.fetch_add(1, std::memory_order_release);
}

// Up to n program counters of worker w's OS thread, a few milliseconds apart, for as long as it
// resumes no other thread (its progress count stays `progress`).
static std::vector<void*> sample_pcs(Worker& w, uint64_t progress, int n) {
  std::vector<void*> pcs;
  if (!w.os_thread_known.load()) return pcs;
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGURG, &sa, nullptr);
  });
  for (int i = 0; i < n; ++i) {
    const unsigned seen = g_samples.load(std::memory_order_acquire);
    if (pthread_kill(w.os_thread, SIGURG) != 0) break;
    for (int wait = 0; wait < 200 && g_samples.load(std::memory_order_acquire) == seen; ++wait)
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (g_samples.load(std::memory_order_acquire) == seen || w.progress.load() != progress) break;
    if (void* pc = g_sampled_pc.load(std::memory_order_relaxed)) pcs.push_back(pc);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pcs;
}

// "file:line" of the learner's code where thread t of worker w keeps running: the line most samples
// landed on. A loop that accesses memory spends most of its time in the simulator's access checks
// (samples outside the learner's code), so when no sample landed in it, the line of the thread's
// last access that the checker saw is in the loop too. *sampled: whether any sample was taken (if
// none, the last access is only where the thread last touched memory, maybe before the loop).
static std::string runaway_site(Worker& w, const Thread& t, uint64_t progress, bool* sampled) {
  const std::vector<void*> pcs = sample_pcs(w, progress, 32);
  *sampled = !pcs.empty();
  const std::vector<std::string> lines = learner_lines(pcs);
  std::string best;
  size_t best_n = 0;
  for (const std::string& l : lines) {
    if (l.empty()) continue;
    size_t n = size_t(std::count(lines.begin(), lines.end(), l));
    if (n > best_n) best = l, best_n = n;
  }
  if (!best.empty()) return best;
  if (const uint32_t pc = last_access_pc(w, t.linear)) {
    std::string site = site_of(pc);
    if (!site.empty() && site != "?") return site;
  }
  return "";
}

void watchdog_start() {
  std::thread([] {
    std::vector<Worker*> ws = all_workers();
    std::vector<uint64_t> last(ws.size(), 0);
    std::vector<std::chrono::steady_clock::time_point> since(ws.size(), std::chrono::steady_clock::now());
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto now = std::chrono::steady_clock::now();
      for (size_t i = 0; i < ws.size(); ++i) {
        Worker* w = ws[i];
        int64_t started = w->block_start_ns.load();
        if (started) {
          double ran = std::chrono::duration<double>(now.time_since_epoch()).count() - double(started) * 1e-9;
          if (ran > options().block_seconds) {
            Grid* g = w->grid;
            const char* hf = w->hot_file.load();
            const unsigned long long passes = w->hot_count.load();
            std::string barrier =
                hf ? strf("; its threads passed the barrier at %s %s", where(hf, w->hot_line.load()).c_str(),
                          passes == 1 ? "once" : strf("%llu times", passes).c_str())
                   : "";
            // Blocks that wait for a flag or counter that no block will write: the last block still
            // running with every other block finished (one worker runs blocks one after another), or
            // every block still running waiting that long (a chain of look-backs, each spinning on the
            // one before, holding every worker). That is a spin-wait on what another block was to
            // write and did not (in a decoupled look-back, a tile that never publishes).
            size_t blocks = g ? size_t(g->grid.x) * g->grid.y * g->grid.z : 0;
            std::string others;
            size_t n_others = 0;
            bool all_long = true;
            for (Worker* o : ws) {
              int64_t o_started = o->block_start_ns.load();
              if (o == w || o->grid != g || !o_started) continue;
              others += (n_others++ ? ", " : "") + dim_str(o->block.bid, o->block.gdim);
              double o_ran = std::chrono::duration<double>(now.time_since_epoch()).count() - double(o_started) * 1e-9;
              if (o_ran < options().block_seconds / 2) all_long = false;
            }
            // Blocks dispatched so far, this one and the running ones included; the rest have not started.
            const size_t started_blocks = g ? std::min(blocks, size_t(g->next.load())) : 0;
            const size_t not_started = blocks - started_blocks;
            const size_t finished = started_blocks >= 1 + n_others ? started_blocks - 1 - n_others : 0;
            const bool alone = g && blocks > 1 && n_others == 0;
            const bool stuck = g && n_others > 0 && all_long;
            std::string state;
            if (alone)
              state = strf(", the last block still running (of the launch's other %zu blocks, %zu finished and %zu not "
                           "started)", blocks - 1, finished, not_started);
            else if (stuck)
              state = strf(", like every other block still running (block%s %s)", n_others == 1 ? "" : "s", others.c_str());
            const char* what =
                alone || stuck
                    ? "\n  No running block will change what it waits for. A spin-wait on a flag or counter that another "
                      "block was to write? Check that every block writes what the others wait for, the first one too, "
                      "or find the loop that never ends. (CUDASIM_BLOCK_SECONDS sets the limit.)"
                    : "\n  A loop around a barrier or a warp *_sync call that never ends? (CUDASIM_BLOCK_SECONDS sets "
                      "the limit.)";
            Diagnosis d{alone || stuck ? Kind::endless_wait : Kind::runaway_block};
            if (hf) d.sites.push_back(where(hf, w->hot_line.load()));
            d.has_block = true;
            d.block = w->block.bid;
            // "seconds" it ran; "state": "alone" (the last block running: of the "blocks" - 1 others,
            // "finished" and "not_started"), "stuck" ("others" still running, linear indices as
            // ranges) or "running"; "passes" of the barrier at the site, when it passed one.
            if (g) launch_facts(d.facts, *g);
            d.facts.set("case", "watchdog").set("seconds", (long long)(ran + 0.5)).set("blocks", blocks);
            d.facts.set("state", alone ? "alone" : stuck ? "stuck" : "running");
            if (alone) d.facts.set("finished", finished).set("not_started", not_started);
            if (stuck) {
              std::vector<unsigned> ids;
              for (Worker* o : ws)
                if (o != w && o->grid == g && o->block_start_ns.load()) ids.push_back(o->block_linear);
              std::sort(ids.begin(), ids.end());
              d.facts.set_json("others", ranges_json(ids));
            }
            if (hf) d.facts.set("passes", (long long)passes);
            fatal(d,
                  strf("runaway block in %s: block %s has run for %.0f s%s%s.%s", g ? kernel_str(g->site).c_str() : "a kernel",
                       dim_str(w->block.bid, w->block.gdim).c_str(), ran, state.c_str(), barrier.c_str(), what));
          }
        }
        uint64_t p = w->progress.load();
        Thread* t = w->current.load();
        if (p != last[i] || !t) {
          last[i] = p;
          since[i] = now;
          continue;
        }
        double secs = std::chrono::duration<double>(now - since[i]).count();
        if (secs < options().stall_seconds) continue;
        Grid* g = w->grid;
        Diagnosis d{Kind::runaway_thread};
        d.interleaved = g && g->interleave;
        d.has_block = true;
        d.block = w->block.bid;
        d.threads.push_back(t->view.tid);
        bool sampled = false;
        const std::string site = runaway_site(*w, *t, p, &sampled);
        if (!site.empty()) d.sites.push_back(site);
        const bool looping = !site.empty() && sampled, last_access = !site.empty() && !sampled;
        // "seconds" it ran; "site" the line it loops at ("where": "loop"), or the line of its last
        // memory access ("where": "last_access"), or none ("where": "unknown").
        if (g) launch_facts(d.facts, *g);
        d.facts.set("seconds", (long long)(secs + 0.5)).set("where", looping ? "loop" : last_access ? "last_access" : "unknown");
        const std::string at = looping ? ", looping at " + site : last_access ? "; its last memory access was at " + site : "";
        fatal(d,
              strf("runaway thread in %s: block %s, thread %s has run for %.0f s without reaching a barrier or returning%s.\n"
                   "  %s (e.g. a stride that stays 0, or an index that is never incremented), or %s a value that another "
                   "thread can only write later? Threads of a block hand values over at a __syncthreads(), not in a loop: "
                   "a loop may read a plain variable once, keep it in a register and wait for ever. "
                   "(CUDASIM_STALL_SECONDS sets the limit.)",
                   g ? kernel_str(g->site).c_str() : "a kernel", dim_str(w->block.bid, w->block.gdim).c_str(),
                   dim_str(t->view.tid, w->block.bdim).c_str(), secs, at.c_str(),
                   looping ? "Does that loop have a condition that never changes" : "Is there a loop whose condition never changes",
                   looping ? "does it wait for" : "a spin-wait on"));
      }
    }
  }).detach();
}

}  // namespace detail

int diagnosis_code(const char* kind) {
  for (const detail::KindRow& r : detail::kKinds)
    if (kind && std::strcmp(r.name, kind) == 0) return r.code;
  return 0;
}

}  // namespace cudasim

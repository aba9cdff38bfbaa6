// The memory checker. The learner's translated file is compiled with ThreadSanitizer's
// instrumentation only (-fsanitize=thread at compile time, not at link time): the compiler calls
// __tsan_read4(addr), __tsan_write8(addr), __tsan_atomic32_fetch_add(...) and so on around every
// load, store and atomic, and this file defines those functions instead of libtsan. They see the
// running CUDA thread (the fiber), the address and the code address of the access, and keep a
// shadow of shared and device memory from which they report
//   - hazards (compute-sanitizer racecheck's model, plus device memory across blocks),
//   - reads of memory nothing wrote (initcheck's model),
//   - accesses outside a shared array or a device buffer, on either side.
// Checking runs in the first thread schedule of each launch, on one worker, so that what it finds
// does not depend on how many cores the machine has. See docs/architecture.md.
#include "check.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

#include "events.h"
#include "internal.h"

namespace cudasim {
namespace detail {

static size_t page_sz() {
  static size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

static Cell* map_cells(size_t n) {
  size_t len = std::max<size_t>(n, 1) * sizeof(Cell);
  len = (len + page_sz() - 1) / page_sz() * page_sz();
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) fatal(Diagnosis{Kind::out_of_memory}, "the simulator could not allocate its shadow memory (out of memory)");
  return static_cast<Cell*>(m);
}
static void unmap_cells(Cell* c, size_t n) {
  size_t len = (std::max<size_t>(n, 1) * sizeof(Cell) + page_sz() - 1) / page_sz() * page_sz();
  munmap(c, len);
}

// ---- code addresses -----------------------------------------------------------------------------

// Stamps keep 32-bit code offsets from the executable's base (the instrumented file is linked in).
static uintptr_t g_code_base = 0;
static inline uint32_t pc32(void* ra) {
  if (__builtin_expect(g_code_base == 0, 0)) {
    Dl_info info;
    g_code_base = dladdr(ra, &info) && info.dli_fbase ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 1;
  }
  return uint32_t(reinterpret_cast<uintptr_t>(ra) - g_code_base);
}

static std::string exe_path() {
  char b[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  b[n] = 0;
  return b;
}

// "file:line" for each pc, from one addr2line call; the innermost inlined frame that is not the
// simulator's own header or a system header (that is the learner's line).
static std::map<uint32_t, std::string> g_sites;
static void symbolize(const std::vector<uint32_t>& pcs) {
  std::vector<uint32_t> todo;
  for (uint32_t pc : pcs)
    if (pc && !g_sites.count(pc) && std::find(todo.begin(), todo.end(), pc) == todo.end()) todo.push_back(pc);
  if (todo.empty()) return;
  std::string exe = exe_path();
  std::string cmd = "addr2line -C -i -e '" + exe + "'";
  for (uint32_t pc : todo) cmd += strf(" 0x%x @", pc - 1);  // the call instruction, not the return address
  cmd += " 2>/dev/null";
  // `@` makes addr2line print "??:0" between addresses: a separator that keeps inlined chains apart.
  std::string outp;
  OwnCalls own;  // the simulator's popen, also from a simulated thread (host_calls.cpp)
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char line[2048];
    while (fgets(line, sizeof line, f)) outp += line;
    pclose(f);
  }
  std::vector<std::vector<std::string>> chains(1);
  size_t pos = 0;
  while (pos < outp.size()) {
    size_t e = outp.find('\n', pos);
    if (e == std::string::npos) e = outp.size();
    std::string l = outp.substr(pos, e - pos);
    pos = e + 1;
    if (l.rfind("??:", 0) == 0) {
      chains.emplace_back();
      continue;
    }
    size_t d = l.find(" (discriminator");
    if (d != std::string::npos) l.resize(d);
    chains.back().push_back(l);
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    std::string best = "?";
    if (i < chains.size())
      for (const std::string& fl : chains[i]) {
        bool lib = fl.find("/cudasim/") != std::string::npos || fl.find("/include/cuda/") != std::string::npos ||
                   fl.rfind("/usr/", 0) == 0;
        if (best == "?" || !lib) best = fl;
        if (!lib) break;
      }
    if (best != "?") {
      size_t colon = best.rfind(':');
      best = where(best.substr(0, colon).c_str(), std::atoi(best.c_str() + colon + 1));
    }
    g_sites[todo[i]] = best;
  }
}
void symbolize_sites(const std::vector<uint32_t>& pcs) { symbolize(pcs); }
std::string site_of(uint32_t pc) {
  if (!pc) return "?";
  symbolize({pc});
  return g_sites[pc];
}

// ---- device memory shadows --------------------------------------------------------------------

struct DevShadow {
  uintptr_t data;
  size_t bytes;
  int id;
  uintptr_t map_lo, map_hi;  // the whole mapping: front canaries, data, slack, guard page
  Cell* cells;
  size_t ncells;
};
namespace {
std::mutex g_dev_mu;
std::map<uintptr_t, DevShadow> g_dev;  // by data address
}  // namespace

void shadow_alloc(uintptr_t data, size_t bytes, int id, uintptr_t map_lo, uintptr_t map_hi) {
  size_t n = (bytes + 3) / 4;
  std::lock_guard<std::mutex> lock(g_dev_mu);
  g_dev[data] = DevShadow{data, bytes, id, map_lo, map_hi, map_cells(n), n};
}
void shadow_free(uintptr_t data) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  auto it = g_dev.find(data);
  if (it == g_dev.end()) return;
  unmap_cells(it->second.cells, it->second.ncells);
  g_dev.erase(it);
}
static DevShadow* dev_of(uintptr_t p) {
  auto it = g_dev.upper_bound(p);
  if (it == g_dev.begin()) return nullptr;
  --it;
  DevShadow& d = it->second;
  return p >= d.data && p < d.data + std::max<size_t>(d.bytes, 1) ? &d : nullptr;
}
static inline uint32_t byte_mask(uintptr_t cell_addr, uintptr_t lo, uintptr_t hi) {
  uintptr_t a = std::max(cell_addr, lo), b = std::min(cell_addr + 4, hi);
  return a < b ? (((1u << (b - a)) - 1) << (a - cell_addr)) : 0;
}
static inline uint32_t writers_of(uint32_t mask, unsigned kind) {
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i)
    if (mask & (1u << i)) w |= kind << (8 + 2 * i);
  return w;
}
static inline uint32_t set_dev_init(uint32_t init, uint32_t mask, unsigned kind) {
  uint32_t keep = 0;
  for (int i = 0; i < 4; ++i)
    if (!(mask & (1u << i))) keep |= 3u << (8 + 2 * i);
  return (init & (keep | 0xfu)) | mask | writers_of(mask, kind);
}

void shadow_host_write(const void* dst, size_t bytes, HostWrite how) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  uintptr_t lo = reinterpret_cast<uintptr_t>(dst), hi = lo + bytes;
  DevShadow* d = dev_of(lo);
  if (!d) return;
  for (uintptr_t c = (lo - d->data) & ~uintptr_t(3); d->data + c < hi; c += 4) {
    Cell& cell = d->cells[c / 4];
    uint32_t m = byte_mask(d->data + c, lo, hi);
    cell.init = set_dev_init(cell.init, m, unsigned(how));
  }
}

void shadow_device_copy(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  DevShadow* ds = dev_of(reinterpret_cast<uintptr_t>(dst));
  DevShadow* ss = dev_of(reinterpret_cast<uintptr_t>(src));
  if (!ds || !ss) return;
  uintptr_t d0 = reinterpret_cast<uintptr_t>(dst) - ds->data, s0 = reinterpret_cast<uintptr_t>(src) - ss->data;
  for (size_t i = 0; i < bytes; ++i) {  // byte by byte: the two ranges need not be aligned alike
    const Cell& sc = ss->cells[(s0 + i) / 4];
    unsigned sb = unsigned((s0 + i) & 3), db = unsigned((d0 + i) & 3);
    Cell& dc = ds->cells[(d0 + i) / 4];
    unsigned kind = (sc.init & (1u << sb)) ? (sc.init >> (8 + 2 * sb)) & 3 : 0;
    dc.init &= ~((1u << db) | (3u << (8 + 2 * db)));
    if (kind) dc.init |= (1u << db) | (kind << (8 + 2 * db));
  }
}

bool written_by_atomic(uintptr_t p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  DevShadow* d = dev_of(p);
  if (!d) return false;
  for (uintptr_t c = (p - d->data) & ~uintptr_t(3); d->data + c < p + bytes; c += 4) {
    const Stamp& w = d->cells[c / 4].w;
    if (w.run == 0 || !(w.flags & kAtomic)) return false;
  }
  return true;
}

}  // namespace detail

bool last_writers(const void* p, size_t bytes, Writer* out) {
  using namespace detail;
  std::lock_guard<std::mutex> lock(g_dev_mu);
  uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  DevShadow* d = dev_of(lo);
  if (!d || lo + bytes > d->data + d->bytes) return false;
  for (size_t i = 0; i < bytes; ++i) {
    size_t off = lo - d->data + i;
    uint32_t init = d->cells[off / 4].init;
    unsigned b = unsigned(off & 3);
    out[i] = (init & (1u << b)) ? Writer((init >> (8 + 2 * b)) & 3) : Writer::None;
  }
  return true;
}

namespace detail {

// ---- the launch being checked ------------------------------------------------------------------

namespace {
struct Release {  // a __threadfence() followed by an atomic: the block's earlier writes are published
  uint64_t seq;
  uint32_t epoch;  // writes of the block in earlier barrier intervals are covered
  uint16_t thread;
  uint16_t fences;  // and the releasing thread's own writes made before its fence
};
struct ArgName {
  uintptr_t ptr;
  std::string name;
};
struct Where {  // a location, for reports
  Space space;
  std::string array;  // "temp", "out", ...
  long long index;
  size_t elem;
};
struct Finding {
  std::string key;
  int count = 0;
  // first instance
  std::string kind;  // "read-after-write" ...
  Where at;
  uint32_t block_a, block_b;  // linear block indices (the same unless across blocks)
  uint16_t thread_a, thread_b;
  uint32_t pc_a, pc_b;
  bool atomic_a, atomic_b;
  bool same_warp, cbar, cross_block, same_line_rmw;
  uint32_t epoch;
  const char* from_file;
  int from_line;
  const char* to_file;
  int to_line;
  bool open;  // the interval has not ended yet
};
struct Checker {
  bool active = false;
  const Grid* grid = nullptr;
  uint32_t next_run = 1;
  uint32_t first_run = 1;
  std::vector<uint32_t> run_block;             // block linear index per run of this launch
  std::vector<std::vector<Release>> releases;  // per run of this launch
  uint64_t rel_seq = 0;
  std::vector<ArgName> args;
  std::vector<DevShadow*> devs;  // sorted by data
  DevShadow* mru = nullptr;  // the two buffers used last: most kernels read one and write another
  DevShadow* mru2 = nullptr;
  uintptr_t gap_lo = 0, gap_hi = 0;  // the last range found to hold no device buffer (built-ins, TLS...)
  std::vector<Finding> hazards, uninit;
  int total_hazards = 0, total_uninit = 0;
};
Checker g_chk;
}  // namespace

static const char* space_word(Space s) { return s == Space::Device ? "device memory" : "shared memory"; }

// ---- engine hooks -------------------------------------------------------------------------------

void MemoryChecker::launch_begin(const LaunchBegin& e) {
  Grid& g = e.g;
  const void* const* ptrs = e.ptrs;
  const char* const* names = e.names;
  const int n = e.n;
  Checker& c = g_chk;
  c.active = g.checking;
  // The access front end finds device buffers for every observer: the map is needed whenever the
  // launch is observed (the profiler alone, too).
  if (g.observed) {
    std::lock_guard<std::mutex> lock(g_dev_mu);
    c.devs.clear();
    for (auto& kv : g_dev) c.devs.push_back(&kv.second);
    c.mru = c.mru2 = c.devs.empty() ? nullptr : c.devs.front();
    c.gap_lo = c.gap_hi = 0;
  }
  if (!c.active) return;
  c.grid = &g;
  c.first_run = c.next_run;
  c.run_block.clear();
  c.releases.clear();
  c.rel_seq = 0;
  c.hazards.clear();
  c.uninit.clear();
  c.total_hazards = c.total_uninit = 0;
  c.args.clear();
  for (int i = 0; i < n; ++i)
    if (ptrs[i]) c.args.push_back(ArgName{reinterpret_cast<uintptr_t>(ptrs[i]), names[i] ? names[i] : ""});
}

void MemoryChecker::block_begin(Worker& w, unsigned n) {
  if (!w.checking) return;
  Checker& c = g_chk;
  if (!w.ck) w.ck = new WorkerCheck();  // lives as long as the worker
  WorkerCheck& wc = *w.ck;
  wc.run = c.next_run++;
  wc.arr_lo = wc.arr_len = 0;
  if (wc.threads.size() < n) wc.threads.resize(n);
  c.run_block.push_back(w.block_linear);
  c.releases.emplace_back();
  for (unsigned i = 0; i < n; ++i) {
    ThreadCheck& k = wc.threads[i];
    std::memset(&k, 0, sizeof k);
    k.cslot = kNoSlot;
    k.vc[i % 32] = 1;  // a lane's own clock starts above what the others know of it (0)
  }
  wc.ncbar = 0;
  wc.blk_seen = wc.blk_seen_pending = wc.blk_acq = wc.blk_acq_pending = 0;
  w.epoch_file = nullptr;
  w.epoch_line = 0;
  w.bar_sites.clear();
}

static void close_findings(uint32_t run, const char* file, int line) {
  for (auto* list : {&g_chk.hazards, &g_chk.uninit})
    for (Finding& f : *list)
      if (f.open && f.block_b == g_chk.run_block[run - g_chk.first_run]) {
        f.to_file = file;
        f.to_line = line;
        f.open = false;
      }
}

void MemoryChecker::block_end(Worker& w) {
  if (!w.checking) return;
  close_findings(w.ck->run, nullptr, 0);
}

void MemoryChecker::barrier(Worker& w, const char* file, int line) {
  if (!w.checking) return;
  WorkerCheck& wc = *w.ck;
  wc.blk_seen = std::max(wc.blk_seen, wc.blk_seen_pending);
  wc.blk_acq = std::max(wc.blk_acq, wc.blk_acq_pending);
  close_findings(wc.run, file, line);
}

bool check_barrier_release(Worker& w, unsigned n, const char* file, int line, BarrierProblem* problem) {
  w.epoch_file = file;
  w.epoch_line = line;
  // How often each barrier was passed, for a loop that never ends.
  BarSite* s = nullptr;
  for (BarSite& b : w.bar_sites)
    if (b.line == line && b.file == file) s = &b;
  if (!s) {
    w.bar_sites.push_back(BarSite{file, line, 0});
    s = &w.bar_sites.back();
  }
  ++s->count;
  if (s->count > w.hot_count.load(std::memory_order_relaxed)) {
    w.hot_file.store(file, std::memory_order_relaxed);
    w.hot_line.store(line, std::memory_order_relaxed);
    w.hot_count.store(s->count, std::memory_order_relaxed);
  }
  if (s->count > (uint64_t)options().max_barrier_passes) {
    *problem = {Kind::runaway_barrier,
                strf("block %s passed the barrier at %s %llu times: a loop around it never ends (its condition never changes, "
                     "e.g. a stride multiplied by 1 or an index that is not incremented).\n  CUDASIM_MAX_BARRIERS sets the limit.",
                     dim_str(w.block.bid, w.block.gdim).c_str(), where(file, line).c_str(), (unsigned long long)s->count)};
    return true;
  }
  if (w.exited == 0) return false;
  // Strict barriers: every thread passes the same barriers. One that returned while the others
  // reach this one diverged, even though the hardware would let the others go on.
  std::vector<unsigned> here;
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::vector<unsigned>>> gone;  // (barriers, last pc) -> threads
  for (unsigned i = 0; i < n; ++i) {
    const Thread& t = w.threads[i];
    if (t.st != St::Exited) {
      here.push_back(i);
      continue;
    }
    std::pair<uint32_t, uint32_t> key{t.bars_at_exit, w.checking ? w.ck->threads[i].last_pc : 0};
    auto it = std::find_if(gone.begin(), gone.end(), [&](auto& p) { return p.first == key; });
    if (it == gone.end()) gone.push_back({key, {i}});
    else it->second.push_back(i);
  }
  std::vector<uint32_t> pcs;
  for (auto& p : gone) pcs.push_back(p.first.second);
  symbolize(pcs);
  unsigned passed = w.bar_epoch + 1;
  std::string out = strf("    thread%s %s reached the barrier at %s (barrier number %u of the block)\n", here.size() > 1 ? "s" : "",
                         ranges(here).c_str(), where(file, line).c_str(), passed);
  for (auto& p : gone) {
    unsigned b = p.first.first;
    out += strf("    thread%s %s returned after passing %u barrier%s%s\n", p.second.size() > 1 ? "s" : "", ranges(p.second).c_str(), b,
                b == 1 ? "" : "s", p.first.second ? (" (last memory access at " + g_sites[p.first.second] + ")").c_str() : "");
  }
  *problem = {Kind::barrier_divergence, out};
  return true;
}

void MemoryChecker::warp_collective(Worker& w, unsigned warp_index, const WarpGroup& g) {
  if (!w.checking) return;
  const unsigned lanes = g.arrived;
  ThreadCheck* t = &w.ck->threads[warp_index * 32];
  uint16_t join[32] = {0};
  for (unsigned l = 0; l < 32; ++l)
    if (lanes & (1u << l))
      for (unsigned j = 0; j < 32; ++j) join[j] = std::max(join[j], t[l].vc[j]);
  for (unsigned l = 0; l < 32; ++l)
    if (lanes & (1u << l)) {
      std::memcpy(t[l].vc, join, sizeof join);
      if (t[l].vc[l] < 0xffff) ++t[l].vc[l];
    }
}

void MemoryChecker::fence(Worker& w, Thread& t) {
  if (!w.checking) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  ++k.fences;
  k.fenced = true;
  k.fence_epoch = w.bar_epoch;
  k.acq = std::max({k.acq, k.seen, w.ck->blk_seen});
  w.ck->blk_acq_pending = std::max(w.ck->blk_acq_pending, k.acq);
}

static uint8_t cbar_slot(WorkerCheck& wc, const CBarState* b) {
  for (int i = 0; i < wc.ncbar; ++i)
    if (wc.cbar_slots[i] == b) return uint8_t(i);
  if (wc.ncbar == 4) return kNoSlot;  // a fifth barrier in one block: its phases order nothing (may over-report)
  wc.cbar_slots[wc.ncbar] = b;
  return uint8_t(wc.ncbar++);
}

void MemoryChecker::cbar_arrive(Worker& w, Thread& t, const CBarState* b, uint64_t, bool, const char*, int) {
  if (!w.checking) return;
  uint8_t s = cbar_slot(*w.ck, b);
  if (s == kNoSlot) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  ++k.carr[s];
  k.cslot = s;
}

void MemoryChecker::cbar_waited(Worker& w, Thread& t, const CBarState* b, uint64_t phase) {
  if (!w.checking) return;
  uint8_t s = cbar_slot(*w.ck, b);
  if (s == kNoSlot) return;
  ThreadCheck& k = w.ck->threads[t.linear];
  k.cwait[s] = std::max<uint16_t>(k.cwait[s], uint16_t(phase + 1));
  k.cslot = s;
}

// ---- locating an access -------------------------------------------------------------------------

// Names the element at `a` for a report: the shared array, or the kernel parameter that points
// into the buffer (partials[3], not "buffer #2 + 16 bytes").
static Where describe(Worker& w, Space sp, uintptr_t a) {
  Where r{sp, "", 0, 1};
  if (sp == Space::Shared) {
    const SharedArray* best = nullptr;
    for (const SharedArray& s : w.shared_arrays) {
      uintptr_t p = reinterpret_cast<uintptr_t>(s.p);
      if (a >= p && a < p + s.bytes) best = &s;
    }
    if (!best) {  // outside every array: the nearest one, below or above
      long long bestd = LLONG_MAX;
      for (const SharedArray& s : w.shared_arrays) {
        long long p = (long long)reinterpret_cast<uintptr_t>(s.p);
        long long d = (long long)a < p ? p - (long long)a : (long long)a - (p + (long long)s.bytes) + 1;
        if (d < bestd) bestd = d, best = &s;
      }
    }
    if (best) {
      r.array = best->name;
      r.elem = best->elem ? best->elem : 1;
      long long off = (long long)a - (long long)reinterpret_cast<uintptr_t>(best->p);
      r.index = off >= 0 ? off / (long long)r.elem : -((-off + (long long)r.elem - 1) / (long long)r.elem);
    }
    return r;
  }
  if (sp == Space::Dynamic) {
    r.array = w.dyn_name ? w.dyn_name : "dynamic shared memory";
    r.elem = w.dyn_elem ? w.dyn_elem : 1;
    long long off = (long long)a - (long long)reinterpret_cast<uintptr_t>(w.dyn_start);
    r.index = off >= 0 ? off / (long long)r.elem : -((-off + (long long)r.elem - 1) / (long long)r.elem);
    return r;
  }
  const Alloc* al = find_alloc_any(reinterpret_cast<void*>(a));
  size_t elem = al && al->elem ? al->elem : 1;
  const ArgName* arg = nullptr;
  // The parameter that points closest below the address into the same buffer; below every
  // such parameter (a negative index), the one that points lowest.
  for (const ArgName& n : g_chk.args)
    if (al && n.ptr >= al->data && n.ptr <= a && (!arg || n.ptr > arg->ptr) && !n.name.empty()) arg = &n;
  if (!arg)
    for (const ArgName& n : g_chk.args)
      if (al && n.ptr >= al->data && n.ptr < al->data + al->bytes && (!arg || n.ptr < arg->ptr) && !n.name.empty())
        arg = &n;
  r.elem = elem;
  uintptr_t base = arg ? arg->ptr : al ? al->data : a;
  r.array = arg ? arg->name : al ? strf("buffer #%d", al->id) : "?";
  long long off = (long long)a - (long long)base;
  r.index = off >= 0 ? off / (long long)elem : -((-off + (long long)elem - 1) / (long long)elem);
  return r;
}

static std::string where_str(const Where& x) {
  return strf("%s[%lld]", x.array.c_str(), x.index);
}

void name_address(Worker& w, int space, uintptr_t a, std::string* array, long long* index, size_t* elem, const char** type) {
  Where x = describe(w, Space(space), a);
  *array = x.array;
  *index = x.index;
  *elem = x.elem;
  const Alloc* al = space == int(Space::Device) ? find_alloc_any(reinterpret_cast<void*>(a)) : nullptr;
  *type = al ? al->type : nullptr;
}

// ---- the checks -----------------------------------------------------------------------------

namespace {
struct Ctx {
  Worker* w;
  Thread* t;
  ThreadCheck* k;  // the checker's state of thread t
  Stamp s;
  Space space;
  uintptr_t addr;
};
}  // namespace

// Whether the earlier access `a` is ordered before the current one.
static bool ordered(const Stamp& a, const Ctx& c) {
  if (a.run != c.s.run) {
    if (c.space != Space::Device) return true;  // an earlier block's shared memory
    if (a.run < g_chk.first_run) return true;    // an earlier launch
    // Another block of this launch: only a release it made and this block acquired orders them.
    uint64_t level = std::max(c.k->acq, c.w->ck->blk_acq);
    for (const Release& r : g_chk.releases[a.run - g_chk.first_run])
      if (r.seq <= level && (a.epoch < r.epoch || (a.thread == r.thread && a.fences < r.fences))) return true;
    return false;
  }
  if (a.thread == c.s.thread) return true;
  if (a.epoch != c.s.epoch) return true;  // a __syncthreads() lies between them
  if (a.thread / 32 == c.s.thread / 32 && a.wclock <= c.k->vc[a.thread % 32]) return true;  // a warp sync
  // A cuda::barrier phase: the access came before the earlier thread's arrival, and the current
  // thread has waited for that phase to complete. Before its first arrival a thread is in phase 0
  // of every barrier.
  if (stamp_slot(a) != kNoSlot) return c.k->cwait[stamp_slot(a)] > a.carr;
  for (int i = 0; i < c.w->ck->ncbar; ++i)
    if (c.k->cwait[i] > 0) return true;
  return false;
}

// Reports are rare: kept out of line so that the per-access path stays small.
__attribute__((noinline, cold)) static void record_hazard(const Ctx& c, const Stamp& a, const char* kind) {
  Checker& k = g_chk;
  ++k.total_hazards;
  Observers::hazard(*c.w, kind, a.thread, a.pc, c.s.thread, c.s.pc, c.space, c.addr, a.run != c.s.run);
  bool cross = a.run != c.s.run;
  std::string key = strf("%s|%u|%u|%d", kind, a.pc, c.s.pc, int(c.space));
  for (Finding& f : k.hazards)
    if (f.key == key) {
      ++f.count;
      return;
    }
  if (k.hazards.size() >= 64) return;
  Finding f;
  f.key = key;
  f.count = 1;
  f.kind = kind;
  f.at = describe(*c.w, c.space, c.addr);
  f.block_a = cross ? k.run_block[a.run - k.first_run] : c.w->block_linear;
  f.block_b = c.w->block_linear;
  f.thread_a = a.thread;
  f.thread_b = c.s.thread;
  f.pc_a = a.pc;
  f.pc_b = c.s.pc;
  f.atomic_a = a.flags & kAtomic;
  f.atomic_b = c.s.flags & kAtomic;
  f.same_warp = !cross && a.thread / 32 == c.s.thread / 32;
  f.cbar = stamp_slot(a) != kNoSlot || stamp_slot(c.s) != kNoSlot;
  f.cross_block = cross;
  f.same_line_rmw = false;
  f.epoch = c.s.epoch;
  f.from_file = c.w->epoch_file;
  f.from_line = c.w->epoch_line;
  f.to_file = nullptr;
  f.to_line = 0;
  f.open = true;
  k.hazards.push_back(f);
}

__attribute__((noinline, cold)) static void record_uninit(const Ctx& c) {
  Checker& k = g_chk;
  ++k.total_uninit;
  Observers::uninit(*c.w, c.s.thread, c.s.pc, c.space, c.addr);
  std::string key = strf("%u|%d", c.s.pc, int(c.space));
  for (Finding& f : k.uninit)
    if (f.key == key) {
      ++f.count;
      return;
    }
  if (k.uninit.size() >= 16) return;
  Finding f{};
  f.key = key;
  f.count = 1;
  f.kind = "uninitialized read";
  f.at = describe(*c.w, c.space, c.addr);
  f.block_a = f.block_b = c.w->block_linear;
  f.thread_a = f.thread_b = c.s.thread;
  f.pc_a = f.pc_b = c.s.pc;
  f.epoch = c.s.epoch;
  f.from_file = c.w->epoch_file;
  f.from_line = c.w->epoch_line;
  f.open = true;
  k.uninit.push_back(f);
}

static inline bool empty(const Stamp& s) { return s.run == 0; }

// Field by field, each load as wide as the store that wrote the field into the Ctx: a whole-struct
// copy reads 8 or 16 bytes that narrower stores have just written, which the CPU cannot forward
// from its store buffer.
static inline void store_stamp(Stamp& d, const Stamp& s, uint8_t flags) {
  d.run = s.run;
  d.epoch = s.epoch;
  d.pc = s.pc;
  d.wclock = s.wclock;
  d.thread = s.thread;
  d.carr = s.carr;
  d.fences = s.fences;
  d.flags = flags;
}

static void check_cell(Ctx& c, Cell& cell, uint32_t mask, bool write, bool read) {
  const bool atomic = c.s.flags & kAtomic;
  const Stamp& s = c.s;
  const uint8_t flags = uint8_t((s.flags & 0x0f) | (mask << 4));
  // Initialised bytes.
  if (read) {
    uint32_t have;
    if (c.space == Space::Device) have = cell.init & 0xf;
    else have = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
    if ((have & mask) != mask) record_uninit(c);
  }
  auto overlap = [&](const Stamp& a) { return ((a.flags >> 4) & mask) != 0; };
  // Two atomics never conflict. Nor does a plain read with an atomic write: a CAS loop starts
  // from a plain read of the value other threads update atomically (the CUDA guide's own
  // atomicAdd for double), and the CAS checks it. Plain writes and read-modify-writes do conflict.
  auto conflicts = [&](const Stamp& a, bool a_wrote) {
    if (empty(a) || !overlap(a) || ordered(a, c)) return false;
    bool a_atomic = a.flags & kAtomic;
    if (atomic && a_atomic) return false;
    if (a_wrote && a_atomic && !write && read) return false;  // plain read after an atomic write
    if (!a_wrote && atomic && write) return false;            // atomic write after a plain read
    return true;
  };
  if (write) {
    if (conflicts(cell.w, true)) record_hazard(c, cell.w, "write-after-write");
    if (conflicts(cell.r1, false)) record_hazard(c, cell.r1, "write-after-read");
    else if (conflicts(cell.r2, false)) record_hazard(c, cell.r2, "write-after-read");
    store_stamp(cell.w, s, flags);
    cell.r1.run = cell.r2.run = 0;
    if (c.space == Space::Device) cell.init = set_dev_init(cell.init, mask, 3);
    else {
      uint32_t cur = (cell.init >> 4) == (s.run & 0x0fffffffu) ? (cell.init & 0xf) : 0;
      cell.init = ((s.run & 0x0fffffffu) << 4) | cur | mask;
    }
  } else {
    if (conflicts(cell.w, true)) record_hazard(c, cell.w, "read-after-write");
    if (!empty(cell.r1) && (cell.r1.thread != s.thread || cell.r1.run != s.run)) cell.r2 = cell.r1;
    store_stamp(cell.r1, s, flags);
  }
}

[[noreturn]] __attribute__((noinline, cold)) static void out_of_bounds(Ctx& c, bool write, const std::string& what) {
  std::string site = site_of(c.s.pc);
  thread_fault_ext(*c.w, *c.t, Kind::out_of_bounds,
                   strf("out-of-bounds %s of %s in %s, block %s, thread %s, at %s: %s.\n"
                        "  Check the index against the array's size on both sides: a guard such as `i >= offset` before "
                        "reading [i - offset], and `i < n` before [i].",
                        write ? "write" : "read", space_word(c.space), kernel_str(c.w->grid->site).c_str(),
                        dim_str(c.w->block.bid, c.w->block.gdim).c_str(), dim_str(c.t->view.tid, c.w->block.bdim).c_str(),
                        site.c_str(), what.c_str()),
                   site);
}

// ---- the access front end ----------------------------------------------------------------------
// Every instrumented access of an observed launch comes here: it finds where the access lands
// (static or dynamic shared memory, or which device buffer) and raises it to the observers.

bool g_observed_launch = false;

// The device buffer whose mapping (front canaries, data, slack, guard page) holds `a`, or null for
// memory that is not device memory (the built-in variables, host or __device__ variables).
static inline DevShadow* device_region(uintptr_t a) {
  Checker& k = g_chk;
  DevShadow* d = k.mru;
  if (d && a - d->map_lo >= d->map_hi - d->map_lo) {
    std::swap(k.mru, k.mru2);
    d = k.mru;
  }
  if (d && a - d->map_lo < d->map_hi - d->map_lo) return d;
  if (a - k.gap_lo < k.gap_hi - k.gap_lo) return nullptr;
  // Below a buffer's start (a negative index) are its front canaries, above its end the slack.
  d = nullptr;
  auto it = std::upper_bound(k.devs.begin(), k.devs.end(), a, [](uintptr_t x, const DevShadow* s) { return x < s->data; });
  if (it != k.devs.begin() && a < (*(it - 1))->map_hi) d = *(it - 1);
  else if (it != k.devs.end() && a >= (*it)->map_lo) d = *it;
  if (!d) {
    k.gap_lo = it == k.devs.begin() ? 0 : (*(it - 1))->map_hi;
    k.gap_hi = it == k.devs.end() ? UINTPTR_MAX : (*it)->map_lo;
    return nullptr;
  }
  k.mru2 = k.mru;
  k.mru = d;
  return d;
}

__attribute__((noinline)) static void on_access(uintptr_t a, size_t size, bool write, bool read, bool atomic, void* ra) {
  Worker* w = tl_worker;
  if (__builtin_expect(!w || !w->observed, 1)) return;
  ThreadView* tv = tl_thread;
  if (!tv) return;
  Thread& t = *reinterpret_cast<Thread*>(tv);
  if (a - t.stack_lo < w->stack_bytes) return;  // the thread's own locals
  Space space;
  DevShadow* region = nullptr;
  if (a - w->sh_lo < w->sh_len) space = Space::Shared;
  else if (a - w->dyn_lo < w->dyn_len) space = Space::Dynamic;
  else if ((region = device_region(a))) space = Space::Device;
  else return;
  Observers::access(AccessEvent{*w, t, a, size, pc32(ra), space, write, read, atomic, region});
}

// ---- the checker's handler ------------------------------------------------------------------------

void MemoryChecker::access(const AccessEvent& e) {
  Worker* w = &e.w;
  if (!w->checking) return;
  Thread& t = e.t;
  const uintptr_t a = e.addr;
  const size_t size = e.size;
  const bool write = e.write, read = e.read, atomic = e.atomic;
  Ctx c;
  c.space = e.space;
  Cell* cells;
  uintptr_t base;
  WorkerCheck& wc = *w->ck;
  if (c.space == Space::Shared) {
    base = w->sh_lo;
    if (__builtin_expect(!wc.sh_shadow, 0)) wc.sh_shadow = map_cells(w->sh_len / 4);
    cells = wc.sh_shadow;
  } else if (c.space == Space::Dynamic) {
    base = w->dyn_lo;
    if (__builtin_expect(!wc.dyn_shadow, 0)) wc.dyn_shadow = map_cells(w->dyn_len / 4);
    cells = wc.dyn_shadow;
  } else {
    DevShadow* d = e.region;
    base = d->data;
    cells = d->cells;
    c.w = w;
    c.t = &t;
    c.addr = a;
    c.s.pc = e.pc;
    c.s.thread = uint16_t(t.linear);
    if (a < d->data || a + size > d->data + d->bytes) {
      Where x = describe(*w, Space::Device, a);
      size_t count = d->bytes / x.elem;
      out_of_bounds(c, write,
                    strf("%s is outside the buffer, which has %zu element%s (valid indices 0 to %lld)", where_str(x).c_str(),
                         count, count == 1 ? "" : "s", (long long)count - 1));
    }
  }
  c.w = w;
  c.t = &t;
  c.addr = a;
  ThreadCheck& k = wc.threads[t.linear];
  c.k = &k;
  c.s.run = wc.run;
  c.s.epoch = w->bar_epoch;
  c.s.pc = e.pc;
  c.s.wclock = k.vc[t.view.lane];
  c.s.thread = uint16_t(t.linear);
  c.s.carr = k.cslot != kNoSlot ? k.carr[k.cslot] : 0;
  c.s.fences = uint8_t(std::min<unsigned>(k.fences, 255));
  c.s.flags = uint8_t((atomic ? kAtomic : 0) | (k.cslot << 1));
  k.last_pc = c.s.pc;
  if (c.space == Space::Shared) {
    // Inside the arena but in no array: before an array's start or past its end.
    bool inside = a - wc.arr_lo < wc.arr_len && a + size - wc.arr_lo <= wc.arr_len;  // the array used last
    for (size_t i = 0; !inside && i < w->shared_arrays.size(); ++i) {
      const SharedArray& s = w->shared_arrays[i];
      uintptr_t p = reinterpret_cast<uintptr_t>(s.p);
      if (a >= p && a + size <= p + s.bytes) {
        inside = true;
        wc.arr_lo = p;
        wc.arr_len = s.bytes;
      }
    }
    if (!inside) {
      Where x = describe(*w, Space::Shared, a);
      long long count = 0;
      for (const SharedArray& s : w->shared_arrays)
        if (x.array == s.name) count = (long long)(s.bytes / (s.elem ? s.elem : 1));
      out_of_bounds(c, write,
                    strf("%s is outside __shared__ %s, which has %lld element%s (valid indices 0 to %lld)", where_str(x).c_str(),
                         x.array.c_str(), count, count == 1 ? "" : "s", count - 1));
    }
  } else if (c.space == Space::Dynamic) {
    uintptr_t lo = reinterpret_cast<uintptr_t>(w->dyn_start);
    if (a < lo || a + size > lo + w->dyn_bytes) {
      Where x = describe(*w, Space::Dynamic, a);
      long long count = (long long)(w->dyn_bytes / x.elem);
      if (w->dyn_bytes == 0)
        out_of_bounds(c, write,
                      strf("%s is dynamic shared memory, but the launch asked for none (the third <<<>>> argument sets "
                           "its size in bytes)", where_str(x).c_str()));
      else
      out_of_bounds(c, write,
                    strf("%s is outside the %zu bytes of dynamic shared memory that the launch asked for (%lld element%s, valid "
                         "indices 0 to %lld; the third <<<>>> argument sets the size)",
                         where_str(x).c_str(), w->dyn_bytes, count, count == 1 ? "" : "s", count - 1));
    }
  }
  // Atomics: a release (fence, then atomic) publishes this block's writes; the atomic observes
  // every release made so far.
  if (atomic && c.space == Space::Device) {
    Checker& ch = g_chk;
    if (k.fenced) {
      ch.releases[wc.run - ch.first_run].push_back(
          Release{++ch.rel_seq, k.fence_epoch, c.s.thread, uint16_t(std::min<unsigned>(k.fences, 255))});
      c.s.fences = uint8_t(std::min<unsigned>(k.fences - 1u, 255));  // the releasing atomic is part of the release
      k.fenced = false;
    }
    k.seen = ch.rel_seq;
    wc.blk_seen_pending = std::max(wc.blk_seen_pending, k.seen);
  }
  uintptr_t hi = a + size;
  for (uintptr_t ca = base + ((a - base) & ~uintptr_t(3)); ca < hi; ca += 4) {
    uint32_t m = byte_mask(ca, a, hi);
    check_cell(c, cells[(ca - base) >> 2], m, write, read);
  }
}

// ---- reports ----------------------------------------------------------------------------------

static std::string interval_str(const Finding& f) {
  std::string from = f.from_file ? "the barrier at " + where(f.from_file, f.from_line) : "the kernel's start";
  std::string to = f.to_file ? "the barrier at " + where(f.to_file, f.to_line) : "the block's end";
  return "between " + from + " and " + to;
}

// Whether one source line both reads and writes one element from many threads (acc += x): the
// hazards then include a write-after-write between two executions of that line.
static bool accumulator(const Finding& f) {
  if (g_sites[f.pc_a] != g_sites[f.pc_b]) return false;
  for (const Finding& h : g_chk.hazards)
    if (h.kind == "write-after-write" && g_sites[h.pc_a] == g_sites[f.pc_a] && g_sites[h.pc_b] == g_sites[f.pc_a]) return true;
  return false;
}

static std::string advice(const Finding& f) {
  if (f.cross_block) {
    if (accumulator(f))
      return "Many threads update the same element: use atomicAdd (or another atomic) for a shared total, or give each "
             "thread its own element and reduce them.";
    return "Blocks run in no fixed order and see each other's plain writes only through a release and an acquire: the writer "
           "calls __threadfence() before the atomic that announces its data, and the reader calls __threadfence() after the "
           "atomic that observed it. Otherwise split the work into two kernel launches.";
  }
  if (accumulator(f))
    return "Many threads update the same element: use atomicAdd (or another atomic), or a reduction tree in which each thread "
           "owns one element per step.";
  if (f.cbar)
    return "With cuda::barrier, what a thread does after arrive() belongs to the next phase: write your element before "
           "arrive(), and read the other threads' elements only after wait() returns.";
  const dim3 b = g_chk.grid->block;
  if (f.same_warp && b.x * b.y * b.z > 32)  // in a one-warp block, __syncthreads() is the lesson
    return "The lanes of a warp do not run in lockstep (since Volta): put __syncwarp() between the write and the read, or "
           "exchange values with __shfl_down_sync().";
  // The first schedule runs threads in order, each to its next barrier. A read and then a write
  // by a later thread at one line (`sdata[tid] += sdata[tid + s]`) is a loop whose steps have no
  // barrier between them: thread 0 ran ahead into later steps and read an element before its
  // owner updated it. (A scan step that reads and writes in one interval is read-after-write.)
  if (f.kind == "write-after-read" && g_sites[f.pc_a] == g_sites[f.pc_b])
    return "The threads were in different steps of the loop: one read an element before its owner had updated it for an "
           "earlier step. End every step with __syncthreads() inside the loop, so that no thread starts the next step "
           "before all have finished this one.";
  if (f.kind == "write-after-read" || g_sites[f.pc_a] == g_sites[f.pc_b])
    return "One step both reads elements that other threads write and writes its own: read into a register, __syncthreads(), "
           "then write, then __syncthreads() again (or write into a second buffer).";
  return "A thread read an element that another thread writes in the same step: put a __syncthreads() between the write and "
         "the read (read, barrier, write, barrier).";
}

static uint3 block_index(uint32_t block) {
  const Grid& g = *g_chk.grid;
  return uint3{block % g.grid.x, (block / g.grid.x) % g.grid.y, block / (g.grid.x * g.grid.y)};
}

static uint3 thread_index(uint16_t thread) {
  const Grid& g = *g_chk.grid;
  return uint3{thread % g.block.x, (thread / g.block.x) % g.block.y, thread / (g.block.x * g.block.y)};
}

static std::string who_str(uint32_t block, uint16_t thread) {
  const Grid& g = *g_chk.grid;
  return strf("block %s thread %s", dim_str(block_index(block), g.grid).c_str(), dim_str(thread_index(thread), g.block).c_str());
}

// The diagnosis of the first finding: its block (the second access's), threads and sites.
static Diagnosis finding_diagnosis(Kind kind, const Finding& f, bool two) {
  Diagnosis d;
  d.kind = kind;
  d.sites.push_back(g_sites[f.pc_a]);
  d.has_block = true;
  d.block = block_index(f.block_b);
  d.threads.push_back(thread_index(f.thread_a));
  if (two) {
    d.sites.push_back(g_sites[f.pc_b]);
    d.threads.push_back(thread_index(f.thread_b));
  }
  return d;
}

static const char* verb(const std::string& kind, bool first, bool atomic) {
  // read-after-write: the first access wrote, the second read.
  bool wrote = first ? kind != "write-after-read" : kind != "read-after-write";
  if (atomic) return wrote ? "atomically updated" : "atomically read";
  return wrote ? "wrote" : "read";
}

std::string check_launch_end(Grid& g, Diagnosis* d) {
  Checker& k = g_chk;
  if (!k.active) return "";
  k.active = false;
  if (k.hazards.empty() && k.uninit.empty()) return "";
  std::vector<uint32_t> pcs;
  for (auto* list : {&k.hazards, &k.uninit})
    for (const Finding& f : *list) pcs.push_back(f.pc_a), pcs.push_back(f.pc_b);
  symbolize(pcs);
  std::string out;
  if (!k.hazards.empty()) {
    const Finding& f0 = k.hazards.front();
    *d = finding_diagnosis(f0.at.space == Space::Device ? Kind::race_device : Kind::race_shared, f0, true);
    out = strf("race in %s: %d hazard%s on %s.\n", kernel_str(g.site).c_str(), k.total_hazards, k.total_hazards == 1 ? "" : "s",
               space_word(f0.at.space));
    // One line per pair of source lines (several instructions of one line count together).
    std::vector<std::pair<std::string, int>> lines;
    for (const Finding& f : k.hazards) {
      const char* a = f.kind == "write-after-read" ? "read" : "write";
      const char* b = f.kind == "read-after-write" ? "read" : "write";
      std::string l = strf("  %s between %s%s at %s and %s%s at %s", f.kind.c_str(), f.atomic_a ? "atomic " : "", a,
                           g_sites[f.pc_a].c_str(), f.atomic_b ? "atomic " : "", b, g_sites[f.pc_b].c_str());
      auto it = std::find_if(lines.begin(), lines.end(), [&](auto& x) { return x.first == l; });
      if (it == lines.end()) lines.push_back({l, f.count});
      else it->second += f.count;
    }
    for (auto& l : lines) out += strf("%s [%d hazard%s]\n", l.first.c_str(), l.second, l.second == 1 ? "" : "s");
    const Finding& f = f0;
    std::string arr = (f.at.space == Space::Device ? "" : "__shared__ ") + where_str(f.at);
    out += strf("  first: %s %s %s at %s, then %s %s it at %s", who_str(f.block_a, f.thread_a).c_str(),
                verb(f.kind, true, f.atomic_a), arr.c_str(), g_sites[f.pc_a].c_str(), who_str(f.block_b, f.thread_b).c_str(),
                verb(f.kind, false, f.atomic_b), g_sites[f.pc_b].c_str());
    if (f.cross_block) out += ",\n         in another block, with no release and acquire between them.\n";
    else out += strf(",\n         with no barrier between them (%s).\n", interval_str(f).c_str());
    out += "  " + advice(f) + "\n";
  }
  if (!k.uninit.empty()) {
    const Finding& f = k.uninit.front();
    if (k.hazards.empty())
      *d = finding_diagnosis(f.at.space == Space::Device ? Kind::uninit_device : Kind::uninit_shared, f, false);
    out += strf("%s in %s: %d read%s of %s that nothing wrote.\n", k.hazards.empty() ? "uninitialized read" : "also: uninitialized read",
                kernel_str(g.site).c_str(), k.total_uninit, k.total_uninit == 1 ? "" : "s", space_word(f.at.space));
    std::vector<std::pair<std::string, int>> lines;
    for (const Finding& u : k.uninit) {
      auto it = std::find_if(lines.begin(), lines.end(), [&](auto& x) { return x.first == g_sites[u.pc_a]; });
      if (it == lines.end()) lines.push_back({g_sites[u.pc_a], u.count});
      else it->second += u.count;
    }
    for (auto& l : lines) out += strf("  read at %s [%d time%s]\n", l.first.c_str(), l.second, l.second == 1 ? "" : "s");
    std::string arr = (f.at.space == Space::Device ? "" : "__shared__ ") + where_str(f.at);
    out += strf("  first: %s read %s at %s (%s), before any thread %s it.\n", who_str(f.block_a, f.thread_a).c_str(),
                arr.c_str(), g_sites[f.pc_a].c_str(), interval_str(f).c_str(),
                f.at.space == Space::Device ? "or cudaMemcpy/cudaMemset wrote" : "of the block wrote");
    out += f.at.space == Space::Device
               ? "  cudaMalloc memory holds garbage: write every element before a kernel reads it (cudaMemcpy, cudaMemset or a "
                 "kernel), or guard the read with the bounds check.\n"
               : "  Shared memory starts as garbage in every block: write every element a thread will read (padding too, with "
                 "the operation's identity, e.g. 0 for a sum or -FLT_MAX for a max), or guard the read.\n";
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace detail
}  // namespace cudasim

// ---- the instrumentation's entry points -------------------------------------------------------
// The names and signatures are ThreadSanitizer's compiler interface (GCC and Clang emit the same
// calls). Accesses outside a checked kernel return at the first test.

// The fast path (no checked launch in flight, CUDASIM_CHECKS=0 or the unchecked schedules) costs
// each access a call, one load of a plain global and a return: cudasim::detail::on_access reads
// thread-locals and saves registers before its first test, which made it the top of a perf
// profile of the fast path (scripts/bench_sim.py).
static inline __attribute__((always_inline)) void on_access(uintptr_t a, size_t size, bool write, bool read, bool atomic,
                                                            void* ra) {
  if (__builtin_expect(cudasim::detail::g_observed_launch, 0)) cudasim::detail::on_access(a, size, write, read, atomic, ra);
}
#define RA __builtin_return_address(0)

extern "C" {
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define CUDASIM_PLAIN(n)                                                                             \
  void __tsan_read##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); }   \
  void __tsan_write##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); }  \
  void __tsan_unaligned_read##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); } \
  void __tsan_unaligned_write##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); } \
  void __tsan_volatile_read##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); }  \
  void __tsan_volatile_write##n(void* a) { on_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); }
CUDASIM_PLAIN(1)
CUDASIM_PLAIN(2)
CUDASIM_PLAIN(4)
CUDASIM_PLAIN(8)
CUDASIM_PLAIN(16)
#undef CUDASIM_PLAIN
void __tsan_read_range(void* a, unsigned long n) { on_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); }
void __tsan_write_range(void* a, unsigned long n) { on_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); }
void* __tsan_memcpy(void* d, const void* s, unsigned long n) {
  on_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, RA);
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memcpy(d, s, n);
}
void* __tsan_memmove(void* d, const void* s, unsigned long n) {
  on_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, RA);
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memmove(d, s, n);
}
void* __tsan_memset(void* d, int v, unsigned long n) {
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memset(d, v, n);
}
void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) {}

// Atomics: perform the operation (sequentially consistent: stronger than CUDA's relaxed atomics,
// which only hides bugs the hazard check reports anyway), then record it.
#define CUDASIM_ATOMICS(bits, T)                                                                               \
  T __tsan_atomic##bits##_load(const volatile T* a, int) {                                                     \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), false, true, true, RA);                               \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                               \
  }                                                                                                            \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                                  \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, false, true, RA);                               \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                  \
  }                                                                                                            \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                                  \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, false, true, RA);                               \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                        \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                                                 \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                                                 \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                                                 \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                                                  \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                          \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                                                 \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                                                \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                        \
  }                                                                                                            \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {                      \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
  }                                                                                                            \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {                        \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
  }                                                                                                            \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                            \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA);                                \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                          \
    return c;                                                                                                  \
  }
CUDASIM_ATOMICS(8, uint8_t)
CUDASIM_ATOMICS(16, uint16_t)
CUDASIM_ATOMICS(32, uint32_t)
CUDASIM_ATOMICS(64, uint64_t)
#undef CUDASIM_ATOMICS
}

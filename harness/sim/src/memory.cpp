// Device memory: one reserved arena holds every cudaMalloc buffer, each in a slot of its own
// (an inaccessible gap, the buffer's pages with canary bytes in the alignment slack, another gap),
// so that an out-of-bounds access faults or is found after the launch, and names the buffer it
// strayed from. Also the memory half of the runtime API.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <map>
#include <set>

#include "internal.h"

namespace cudasim {
namespace detail {

static constexpr unsigned char kCanary = 0xA5;
// cudaMalloc returns 256-byte aligned memory, and kernels rely on it (int4 loads; coalescing into
// 32-byte sectors, which the profiler counts): the buffer's end is rounded up to that, and the
// rounding holds canaries.
static constexpr size_t kMallocAlign = 256;
static size_t padded_size(size_t bytes) { return (std::max<size_t>(bytes, 1) + kMallocAlign - 1) & ~(kMallocAlign - 1); }
static constexpr unsigned char kUninit = 0xCD;

namespace {
struct Registry {
  std::mutex mu;
  std::map<uintptr_t, Alloc> live;   // by data address
  std::map<uintptr_t, Alloc> freed;  // by slot start, until a later allocation reuses the slot: "use after free"
  int next_id = 1;
};
Registry& reg() {
  static Registry* r = new Registry();
  return *r;
}
size_t page_size() {
  static size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}
thread_local cudaError_t t_last_error = cudaSuccess;
}  // namespace

void set_last_error(cudaError_t e) {
  if (e != cudaSuccess) t_last_error = e;
}

static cudaError_t api_error(cudaError_t e, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "cudasim: %s: %s (returns %s)\n", where(file, line).c_str(), msg.c_str(), cudaGetErrorName(e));
  set_last_error(e);
  return e;
}

const Alloc* find_alloc(const void* p, size_t len) {
  Registry& r = reg();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = r.live.upper_bound(a);
  if (it == r.live.begin()) return nullptr;
  --it;
  const Alloc& al = it->second;
  if (a >= al.data && a + len <= al.data + std::max<size_t>(al.bytes, 1)) return &al;
  return nullptr;
}

const Alloc* find_alloc_any(const void* p) {
  Registry& r = reg();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = r.live.upper_bound(a);
  if (it != r.live.end() && a >= it->second.slot_lo) return &it->second;  // the gap before the next buffer
  if (it == r.live.begin()) return nullptr;
  --it;
  const Alloc& al = it->second;
  return a < al.slot_hi ? &al : nullptr;
}

const Alloc* nearest_alloc(uintptr_t a) {
  Registry& r = reg();
  auto it = r.live.upper_bound(a);
  const Alloc* above = it != r.live.end() ? &it->second : nullptr;
  const Alloc* below = it != r.live.begin() ? &std::prev(it)->second : nullptr;
  if (!below) return above;
  uintptr_t end = below->data + std::max<size_t>(below->bytes, 1);
  uintptr_t d_below = a >= end ? a - end : 0;
  return above && above->data - a < d_below ? above : below;
}

const Alloc* freed_alloc(uintptr_t a) {
  Registry& r = reg();
  auto it = r.freed.upper_bound(a);
  if (it == r.freed.begin()) return nullptr;
  const Alloc& f = std::prev(it)->second;
  return a >= f.map_base && a < f.map_base + f.map_len ? &f : nullptr;
}

std::string alloc_distance(const Alloc& a, uintptr_t p) {
  if (p >= a.map_base && p < a.map_base + a.map_len) return "";
  if (p < a.data) {
    unsigned long long d = a.data - p;
    return strf("%llu byte%s before its start", d, d == 1 ? "" : "s");
  }
  unsigned long long d = p - (a.data + a.bytes);
  return strf("%llu byte%s after its end", d, d == 1 ? "" : "s");
}

std::string alloc_str(const Alloc& a) {
  if (a.id == 0) return strf("__device__ variable %s (%zu bytes, declared at %s)", a.type, a.bytes, where(a.file, a.line).c_str());
  const char* api = is_managed_alloc(&a) ? "cudaMallocManaged" : "cudaMalloc";
  if (a.type && a.elem > 1)
    return strf("buffer #%d (%zu x %s, %s at %s)", a.id, a.bytes / a.elem, a.type, api, where(a.file, a.line).c_str());
  return strf("buffer #%d (%zu bytes, %s at %s)", a.id, a.bytes, api, where(a.file, a.line).c_str());
}

std::string alloc_json(const Alloc& a) {
  const std::string site = json_quote(where(a.file, a.line));
  if (a.id == 0) return strf("{\"id\": 0, \"name\": %s, \"bytes\": %zu, \"site\": %s}", json_quote(a.type ? a.type : "?").c_str(), a.bytes, site.c_str());
  std::string r = strf("{\"id\": %d, \"bytes\": %zu, \"api\": \"%s\", \"site\": %s", a.id, a.bytes,
                       is_managed_alloc(&a) ? "cudaMallocManaged" : "cudaMalloc", site.c_str());
  if (a.type && a.elem > 1) r += strf(", \"elements\": %zu, \"type\": %s", a.bytes / a.elem, json_quote(a.type).c_str());
  return r + "}";
}

// Called from the crash handler too: takes no lock (the faulting thread may be in the runtime).
std::string describe_address(uintptr_t addr, Kind* kind, Facts* facts) {
  if (addr - g_arena_lo >= g_arena_len) return "";  // not device memory
  // "place": what the words below say, as facts (diagnosis_races.py, place_words): "buffer",
  // "unit" (element or byte) and "offset", "freed" and "free_site", "size" (elements, or bytes),
  // "distance" and "distance_side" beyond the buffer's pages, "nearest", "no_buffer".
  Facts place;
  place.set("address", strf("%p", reinterpret_cast<void*>(addr)));
  const Alloc* a = find_alloc_any(reinterpret_cast<void*>(addr));
  bool nearest = false;
  if (!a) {
    if (const Alloc* f = freed_alloc(addr)) {
      if (kind) *kind = Kind::use_after_free;
      long long off = (long long)addr - (long long)f->data;
      const bool bytes = alloc_untyped(*f) || off < 0 || off % (long long)f->elem;
      std::string at = bytes ? strf("byte %lld", off) : strf("element [%lld]", off / (long long)f->elem);
      place.set_json("buffer", alloc_json(*f)).set("unit", bytes ? "byte" : "element")
          .set("offset", bytes ? off : off / (long long)f->elem).set("freed", true)
          .set("free_site", where(f->free_file, f->free_line));
      if (facts) facts->set_json("place", place.json());
      return strf("%s of %s, which cudaFree already released at %s (use after free)", at.c_str(), alloc_str(*f).c_str(),
                  where(f->free_file, f->free_line).c_str());
    }
    a = nearest_alloc(addr);
    nearest = true;
  }
  if (kind) *kind = Kind::out_of_bounds;
  if (!a) {
    place.set("no_buffer", true);
    if (facts) facts->set_json("place", place.json());
    return strf("address %p of device memory, where no buffer is allocated: out of bounds", reinterpret_cast<void*>(addr));
  }
  long long off = (long long)addr - (long long)a->data;
  std::string s;
  place.set_json("buffer", alloc_json(*a));
  if (alloc_untyped(*a)) {
    place.set("unit", "byte").set("offset", off).set("size", a->bytes);
    s = strf("byte %lld of %s, which has %zu byte%s: out of bounds", off, alloc_str(*a).c_str(), a->bytes, a->bytes == 1 ? "" : "s");
  } else {
    size_t elem = a->elem ? a->elem : 1;
    size_t count = a->bytes / elem;
    const long long index = off >= 0 ? off / (long long)elem : -((-off + (long long)elem - 1) / (long long)elem);
    place.set("unit", "element").set("offset", index).set("size", count);
    s = strf("element [%lld] of %s, which has %zu element%s: out of bounds", index, alloc_str(*a).c_str(), count,
             count == 1 ? "" : "s");
  }
  std::string d = alloc_distance(*a, addr);
  if (!d.empty()) {
    s += ", " + d;
    place.set("distance", (long long)(addr < a->data ? a->data - addr : addr - (a->data + a->bytes)))
        .set("distance_side", addr < a->data ? "before" : "after");
  }
  if (nearest) {
    s += " (no buffer is there; this is the nearest one)";
    place.set("nearest", true);
  }
  if (facts) facts->set_json("place", place.json());
  return s;
}

// Managed buffers (cudaMallocManaged), by data address: host code may touch them, so they are
// never protected, and every launch treats their bytes as written (host writes are not seen).
static std::set<uintptr_t>& managed() {
  static std::set<uintptr_t>* m = new std::set<uintptr_t>();
  return *m;
}
static bool is_managed(const Alloc* a) { return a && managed().count(a->data); }

void managed_before_launch() {
  Registry& r = reg();
  std::vector<std::pair<uintptr_t, size_t>> ranges;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (uintptr_t d : managed()) {
      auto it = r.live.find(d);
      if (it != r.live.end()) ranges.emplace_back(d, it->second.bytes);
    }
  }
  for (auto& rg : ranges) shadow_host_write(reinterpret_cast<void*>(rg.first), rg.second, HostWrite::Copy);
}

bool is_managed_alloc(const Alloc* a) { return is_managed(a); }

// Managed memory is host memory too, so host code may touch it, except while the puzzles' harness
// runs a case with device-to-host copies forbidden (host_reads.cpp): then a launcher that reads it
// between launches would compute the answer on the CPU, and the buffer is closed to host code like
// any device buffer. The crash handler tells that read apart from a host write (which opens it).
static void protect(const Alloc& a, bool on) {
  if (managed().count(a.data) && !device_to_host_copies_forbidden()) on = true;
  mprotect(reinterpret_cast<void*>(a.map_base), a.map_len, on ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void open_managed_for_host(const Alloc& a) {
  mprotect(reinterpret_cast<void*>(a.map_base), a.map_len, PROT_READ | PROT_WRITE);
}

static int g_access_depth = 0;  // host thread only
void device_access(bool on) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  g_access_depth += on ? 1 : -1;
  if ((on && g_access_depth == 1) || (!on && g_access_depth == 0))
    for (auto& kv : r.live) protect(kv.second, on);
}

void managed_protection_update() {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (g_access_depth != 0) return;  // inside a launch or a copy: device_access(false) applies it
  for (uintptr_t d : managed()) {
    auto it = r.live.find(d);
    if (it != r.live.end()) protect(it->second, false);
  }
}

namespace {
struct Access {  // device memory readable and writable for the scope
  Access() { device_access(true); }
  ~Access() { device_access(false); }
};
}  // namespace

// ---- the arena ------------------------------------------------------------------------------------
// One reservation (PROT_NONE, no swap reserved) for every device buffer, made at the first
// allocation. Slots are placed in its middle half, so that a wild offset from any buffer, up or
// down, still lands inside it: device code that touches the arena outside the live buffers' pages
// faults (the checker reports it first), and the report names the nearest buffer.
uintptr_t g_arena_lo = 0;
uintptr_t g_arena_len = 0;

namespace {
struct Arena {
  uintptr_t area_lo = 0, area_hi = 0;  // where slots go
  uintptr_t bump = 0;                  // below it, slots have been handed out at least once
  std::map<uintptr_t, size_t> free_ranges;                // reusable, by start, coalesced
  std::deque<std::pair<uintptr_t, size_t>> quarantine;  // freed slots not reused yet, oldest first
  size_t quarantined = 0;
};
Arena& arena() {
  static Arena* a = new Arena();
  return *a;
}
}  // namespace

// A gap as large as the buffer itself (up to kGapCap) keeps a past-the-end or negative index
// nearer its own buffer than any other; while the arena is less than half used, gaps are at
// least kGapFloor, so that a pointer offset by a few million elements stays in its buffer's slot.
static constexpr size_t kGapFloor = size_t(32) << 20;
static constexpr size_t kGapCap = size_t(1) << 30;
// Freed slots wait this long (in bytes of slots freed after them) before they are reused, so that
// a use after free finds the released buffer rather than a new one.
static constexpr size_t kQuarantine = size_t(1) << 30;

// The address space the process may still map: RLIMIT_AS counts a PROT_NONE reservation in full,
// and graders run learner programs under such a limit (grade: 4 GiB).
static size_t address_space_left() {
#if defined(__APPLE__)
  return SIZE_MAX;  // macOS accepts an RLIMIT_AS but does not enforce it (and has no /proc)
#endif
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  size_t used = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long pages = 0;
    if (std::fscanf(f, "%lu", &pages) == 1) used = size_t(pages) * page_size();
    std::fclose(f);
  }
  return rl.rlim_cur > used ? size_t(rl.rlim_cur) - used : 0;
}

static bool arena_reserve() {
  if (g_arena_len) return true;
  // At most half of what is left under an address-space limit: the shadows, fiber stacks and
  // host allocations need the rest.
  const size_t left = address_space_left();
  for (size_t mib : {size_t(1) << 20, size_t(256) << 10, size_t(64) << 10, size_t(16) << 10, size_t(4) << 10, size_t(1) << 10,
                     size_t(256)}) {
    size_t len = mib << 20;
    if (len > left / 2) continue;
    void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) continue;
    Arena& A = arena();
    A.area_lo = reinterpret_cast<uintptr_t>(m) + len / 4;
    A.area_hi = A.area_lo + len / 2;
    A.bump = A.area_lo;
    g_arena_lo = reinterpret_cast<uintptr_t>(m);
    g_arena_len = len;
    return true;
  }
  return false;
}

static size_t gap_for(size_t pages_len) {
  Arena& A = arena();
  size_t floor = A.bump - A.area_lo < (A.area_hi - A.area_lo) / 2 ? kGapFloor : page_size();
  return std::min(std::max(pages_len, floor), kGapCap);
}

static void add_free_range(uintptr_t lo, size_t len) {
  auto& f = arena().free_ranges;
  auto next = f.lower_bound(lo);
  if (next != f.end() && lo + len == next->first) {
    len += next->second;
    next = f.erase(next);
  }
  if (next != f.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == lo) {
      prev->second += len;
      return;
    }
  }
  f.emplace(lo, len);
}

static void release_oldest() {
  Arena& A = arena();
  auto q = A.quarantine.front();
  A.quarantine.pop_front();
  A.quarantined -= q.second;
  add_free_range(q.first, q.second);
}

// A slot of len bytes: the lowest reusable range that fits, else fresh space; 0 when the arena is full.
static uintptr_t place_slot(size_t len) {
  Arena& A = arena();
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (auto it = A.free_ranges.begin(); it != A.free_ranges.end(); ++it)
      if (it->second >= len) {
        uintptr_t lo = it->first;
        size_t rest = it->second - len;
        A.free_ranges.erase(it);
        if (rest) A.free_ranges.emplace(lo + len, rest);
        return lo;
      }
    if (A.area_hi - A.bump >= len) {
      uintptr_t lo = A.bump;
      A.bump += len;
      return lo;
    }
    while (!A.quarantine.empty()) release_oldest();  // full: every freed slot becomes reusable
  }
  return 0;
}

static void free_slot(const Alloc& a) {
  // Fresh inaccessible pages in place of the buffer's: its memory goes back to the system.
  mmap(reinterpret_cast<void*>(a.map_base), a.map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  Arena& A = arena();
  A.quarantine.emplace_back(a.slot_lo, a.slot_hi - a.slot_lo);
  A.quarantined += a.slot_hi - a.slot_lo;
  while (A.quarantined > kQuarantine) release_oldest();
}

cudaError_t malloc_typed(void** p, size_t bytes, size_t elem, const char* type, const char* file, int line) {
  if (!p) return api_error(cudaErrorInvalidValue, file, line, "cudaMalloc was given a null pointer to store the address in");
  size_t pg = page_size();
  size_t padded = padded_size(bytes);
  if (padded < bytes) padded = SIZE_MAX;  // (rounding wrapped around: refused below)
  size_t pages_len = padded == SIZE_MAX ? SIZE_MAX : (padded + pg - 1) / pg * pg;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  uintptr_t slot = 0;
  size_t gap = 0;
  if (pages_len <= (size_t(1) << 46) && arena_reserve()) {
    gap = gap_for(pages_len);
    slot = place_slot(gap + pages_len + gap);
  }
  if (!slot) {
    *p = nullptr;
    return api_error(cudaErrorMemoryAllocation, file, line, strf("cudaMalloc of %zu bytes failed: out of memory", bytes));
  }
  uintptr_t base = slot + gap;
  if (mprotect(reinterpret_cast<void*>(base), pages_len, PROT_READ | PROT_WRITE) != 0) {
    add_free_range(slot, gap + pages_len + gap);
    *p = nullptr;
    return api_error(cudaErrorMemoryAllocation, file, line, strf("cudaMalloc of %zu bytes failed: out of memory", bytes));
  }
  // The buffer ends where its pages end: an access past the slack faults at once.
  uintptr_t data = base + pages_len - padded;
  std::memset(reinterpret_cast<void*>(base), kCanary, data - base);
  std::memset(reinterpret_cast<void*>(data), kUninit, bytes);  // cudaMalloc memory is not zeroed
  std::memset(reinterpret_cast<void*>(data + bytes), kCanary, padded - bytes);
  // A released buffer whose slot this one reuses is no longer what an access there hits.
  uintptr_t slot_hi = base + pages_len + gap;
  for (auto it = r.freed.lower_bound(slot); it != r.freed.end() && it->first < slot_hi;) it = r.freed.erase(it);
  if (!r.freed.empty()) {
    auto it = r.freed.lower_bound(slot);
    if (it != r.freed.begin() && std::prev(it)->second.slot_hi > slot) r.freed.erase(std::prev(it));
  }
  Alloc a{r.next_id++, base, pages_len, data, bytes, elem, type, file, line};
  a.slot_lo = slot;
  a.slot_hi = slot_hi;
  r.live[data] = a;
  shadow_alloc(data, bytes, a.id, a.slot_lo, a.slot_hi);
  if (g_access_depth == 0) protect(a, false);
  *p = reinterpret_cast<void*>(data);
  return cudaSuccess;
}

static bool canary_ok(uintptr_t from, uintptr_t to, uintptr_t* bad) {
  for (uintptr_t q = from; q < to; ++q)
    if (*reinterpret_cast<unsigned char*>(q) != kCanary) {
      *bad = q;
      return false;
    }
  return true;
}

std::string check_canaries() {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& kv : r.live) {
    const Alloc& a = kv.second;
    size_t padded = padded_size(a.bytes);
    uintptr_t bad = 0;
    if (!canary_ok(a.data + a.bytes, a.data + padded, &bad) || !canary_ok(a.map_base, a.data, &bad)) {
      std::string d = describe_address(bad);
      // Restore so that one overwrite is reported once.
      std::memset(reinterpret_cast<void*>(a.map_base), kCanary, a.data - a.map_base);
      std::memset(reinterpret_cast<void*>(a.data + a.bytes), kCanary, padded - a.bytes);
      return "a kernel wrote to " + d;
    }
  }
  return "";
}

// __device__ and __constant__ variables (cu2cpp.py registers each one): every schedule of a launch
// starts from their values before it, like cudaMalloc memory. Their Alloc has id 0 and the
// variable's name as its type; they are not guarded or shadowed.
static std::vector<Alloc>& symbols() {
  static std::vector<Alloc>* v = [] {
    auto* x = new std::vector<Alloc>();
    x->reserve(4096);  // stable addresses: snapshots point at the entries
    return x;
  }();
  return *v;
}

void register_symbol(void* p, size_t bytes, const char* name, const char* file, int line) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const Alloc& s : symbols())
    if (s.data == a) return;  // a header's variable, registered by each file that includes it
  if (symbols().size() == symbols().capacity()) return;  // (4096 variables: the rest are not restored)
  symbols().push_back(Alloc{0, a, bytes, a, bytes, 1, name, file, line});
}

// One buffer's bytes into `part`, chunk by chunk (internal.h, Snapshot): a chunk of one repeated
// byte costs nothing, and one equal to the base's chunk (`base`, when given) neither.
static void snap_part(SnapPart& part, const Alloc& a, const SnapPart* base, const Snapshot* base_snap);
static const unsigned char* snap_chunk(const Snapshot& s, size_t i, size_t c, unsigned char* tmp, size_t len);

static void snap_part(SnapPart& part, const Alloc& a, const SnapPart* base, const Snapshot* base_snap) {
  const unsigned char* d = reinterpret_cast<const unsigned char*>(a.data);
  const size_t chunks = (a.bytes + kSnapChunk - 1) / kSnapChunk;
  part.a = &a;
  part.at.resize(chunks);
  unsigned char tmp[kSnapChunk];
  for (size_t c = 0; c < chunks; ++c) {
    const unsigned char* p = d + c * kSnapChunk;
    const size_t len = std::min(kSnapChunk, a.bytes - c * kSnapChunk);
    if (base && base->a == &a) {
      const unsigned char* b = snap_chunk(*base_snap, size_t(base - base_snap->parts.data()), c, tmp, len);
      if (std::memcmp(b, p, len) == 0) {
        part.at[c] = kSnapBase;
        continue;
      }
    }
    if (len > 0 && std::memcmp(p, p + 1, len - 1) == 0) {
      part.at[c] = kSnapUniform | p[0];
      continue;
    }
    part.at[c] = part.data.size();
    part.data.insert(part.data.end(), p, p + len);
  }
}

// The bytes of chunk c of part i of s (len bytes): a pointer into s, its base, or tmp.
static const unsigned char* snap_chunk(const Snapshot& s, size_t i, size_t c, unsigned char* tmp, size_t len) {
  const uint64_t at = s.parts[i].at[c];
  if (at & kSnapBase) return snap_chunk(*s.base, i, c, tmp, len);
  if (at & kSnapUniform) {
    std::memset(tmp, int(at & 0xff), len);
    return tmp;
  }
  return s.parts[i].data.data() + at;
}

void snapshot_take(Snapshot& s, const Snapshot* base) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  s.parts.clear();
  s.base = base;
  size_t i = 0;
  auto add = [&](const Alloc& a) {
    s.parts.emplace_back();
    const SnapPart* b = base && i < base->parts.size() ? &base->parts[i] : nullptr;
    snap_part(s.parts.back(), a, b, base);
    ++i;
  };
  for (auto& kv : r.live) add(kv.second);
  for (const Alloc& a : symbols()) add(a);
}

void snapshot_restore(const Snapshot& s) {
  unsigned char tmp[kSnapChunk];
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const Alloc& a = *s.parts[i].a;
    for (size_t c = 0; c < s.parts[i].at.size(); ++c) {
      const size_t len = std::min(kSnapChunk, a.bytes - c * kSnapChunk);
      unsigned char* d = reinterpret_cast<unsigned char*>(a.data) + c * kSnapChunk;
      const unsigned char* src = snap_chunk(s, i, c, tmp, len);
      if (std::memcmp(d, src, len) != 0) std::memcpy(d, src, len);  // pages left alone stay unshared
    }
  }
}

void snapshot_changes(const Snapshot& s, const std::function<void(uintptr_t, size_t)>& fn) {
  unsigned char tmp[kSnapChunk];
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const Alloc& a = *s.parts[i].a;
    if (a.id == 0) continue;  // __device__ variables have no shadow
    const unsigned char* d = reinterpret_cast<const unsigned char*>(a.data);
    for (size_t c = 0; c < s.parts[i].at.size(); ++c) {
      const size_t off = c * kSnapChunk, len = std::min(kSnapChunk, a.bytes - off);
      const unsigned char* old = snap_chunk(s, i, c, tmp, len);
      if (std::memcmp(old, d + off, len) == 0) continue;
      for (size_t b = 0; b < len;) {
        if (old[b] == d[off + b]) {
          ++b;
          continue;
        }
        // Whole elements (words of an untyped buffer): a byte of a new value may equal the old one.
        const size_t el = a.elem > 1 ? a.elem : 4;
        size_t e = b;
        while (e < len && old[e] != d[off + e]) ++e;
        const size_t lo = (off + b) / el * el, hi = std::min(a.bytes, (off + e + el - 1) / el * el);
        fn(a.data + lo, hi - lo);
        b = e;
      }
    }
  }
}

static std::string element_str(const Alloc& a, const unsigned char* p) {
  std::string t = a.type && a.id != 0 ? a.type : "";
  if (t == "int") { int v; std::memcpy(&v, p, 4); return strf("%d", v); }
  if (t == "unsigned") { unsigned v; std::memcpy(&v, p, 4); return strf("%u", v); }
  if (t == "float") { float v; std::memcpy(&v, p, 4); return strf("%.9g", v); }
  if (t == "double") { double v; std::memcpy(&v, p, 8); return strf("%.17g", v); }
  if (t == "long long") { long long v; std::memcpy(&v, p, 8); return strf("%lld", v); }
  std::string hex = "0x";
  for (size_t i = a.elem; i-- > 0;) hex += strf("%02x", p[i]);
  return hex;
}

std::string snapshot_diff(const Snapshot& a, const char* name_a, const char* name_b, size_t* atomic_only, std::string* facts) {
  // Device memory now against the copy, chunk by chunk; a buffer that differs is spelled out.
  std::string out;
  unsigned char tmp[kSnapChunk];
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const Alloc& al = *a.parts[i].a;
    const unsigned char* y = reinterpret_cast<const unsigned char*>(al.data);
    bool same = true;
    for (size_t c = 0; same && c < a.parts[i].at.size(); ++c) {
      const size_t len = std::min(kSnapChunk, al.bytes - c * kSnapChunk);
      same = std::memcmp(snap_chunk(a, i, c, tmp, len), y + c * kSnapChunk, len) == 0;
    }
    if (same) continue;
    std::vector<unsigned char> x(al.bytes);
    for (size_t c = 0; c < a.parts[i].at.size(); ++c) {
      const size_t len = std::min(kSnapChunk, al.bytes - c * kSnapChunk);
      std::memcpy(&x[c * kSnapChunk], snap_chunk(a, i, c, tmp, len), len);
    }
    size_t elem = al.elem ? al.elem : 1, count = x.size() / elem, differ = 0;
    const bool untyped = al.id != 0 && alloc_untyped(al);  // (void**) cudaMalloc: counted in bytes
    std::string first, values;
    for (size_t e = 0; e < count; ++e) {
      if (std::memcmp(&x[e * elem], &y[e * elem], elem) == 0) continue;
      if (atomic_only && written_by_atomic(al.data + e * elem, elem)) {
        // Only atomics wrote it: the order of atomics is free, and so is what it gives (float
        // rounding, the last atomicExch wins). Not a race.
        ++*atomic_only;
        continue;
      }
      if (++differ <= 5) {
        first += strf("      %s%zu%s %s: %s   %s: %s\n", untyped ? "byte " : "[", e, untyped ? ":" : "]", name_a,
                      element_str(al, &x[e * elem]).c_str(), name_b, element_str(al, &y[e * elem]).c_str());
        if (facts)
          values += strf("%s{\"index\": %zu, \"first\": %s, \"second\": %s}", values.empty() ? "" : ", ", e,
                         json_quote(element_str(al, &x[e * elem])).c_str(), json_quote(element_str(al, &y[e * elem])).c_str());
      }
    }
    if (differ)
      out += strf("    %s: %zu of %zu %s differ\n%s", alloc_str(al).c_str(), differ, count, untyped ? "bytes" : "elements", first.c_str());
    if (differ && facts)  // the same as data, for the diagnosis record
      *facts += strf("%s{\"buffer\": %s, \"differ\": %zu, \"count\": %zu, \"bytes_index\": %s, \"values\": [%s]}",
                     facts->empty() ? "" : ", ", alloc_json(al).c_str(), differ, count, untyped ? "true" : "false", values.c_str());
  }
  return out;
}

}  // namespace detail
}  // namespace cudasim

using namespace cudasim::detail;

cudaError_t cudaMalloc(void** p, size_t bytes, const char* file, int line) { return malloc_typed(p, bytes, 1, nullptr, file, line); }

cudaError_t cudaFree(void* p, const char* file, int line) {
  if (!p) return cudaSuccess;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(reinterpret_cast<uintptr_t>(p));
  if (it == r.live.end())
    return api_error(cudaErrorInvalidDevicePointer, file, line,
                     strf("cudaFree(%p): not the start of a live cudaMalloc buffer (freed twice, or a host pointer?)", p));
  Alloc a = it->second;
  r.live.erase(it);
  managed().erase(a.data);
  shadow_free(a.data);
  free_slot(a);
  a.free_file = file;
  a.free_line = line;
  r.freed[a.slot_lo] = a;
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** p, size_t bytes, const char*, int) {
  *p = std::malloc(std::max<size_t>(bytes, 1));
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void* p) {
  std::free(p);
  return cudaSuccess;
}

static const char* kind_name(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    default: return "cudaMemcpyDefault";
  }
}

// Checks one side of a copy: device memory must lie inside one live buffer.
static bool check_side(const void* p, size_t bytes, bool want_device, const char* side, cudaMemcpyKind kind, const char* file, int line) {
  const Alloc* a = find_alloc(p, 1);
  if (!want_device && is_managed(a)) return true;  // managed memory is host memory too
  if (want_device) {
    if (!a) {
      api_error(cudaErrorInvalidValue, file, line,
                strf("%s of %s is %p, which is not device memory. Did you swap the source and destination, or pass a host array?",
                     side, kind_name(kind), p));
      return false;
    }
    if (reinterpret_cast<uintptr_t>(p) + bytes > a->data + a->bytes) {
      api_error(cudaErrorInvalidValue, file, line,
                strf("%s of %s: copying %zu bytes from offset %zu overruns %s (%zu bytes)", side, kind_name(kind), bytes,
                     size_t(reinterpret_cast<uintptr_t>(p) - a->data), alloc_str(*a).c_str(), a->bytes));
      return false;
    }
  } else if (a) {
    api_error(cudaErrorInvalidValue, file, line,
              strf("%s of %s is device memory (%s), but the copy direction says host memory. Check the cudaMemcpyKind.", side,
                   kind_name(kind), alloc_str(*a).c_str()));
    return false;
  }
  return true;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, const char* file, int line) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return api_error(cudaErrorInvalidValue, file, line, strf("%s with a null pointer", kind_name(kind)));
  Access access;
  if (kind == cudaMemcpyDefault) {
    std::memmove(dst, src, bytes);
    bool dd = find_alloc(dst, 1) != nullptr, sd = find_alloc(src, 1) != nullptr;
    if (sd && !dd) device_to_host_copy(bytes, "cudaMemcpyDefault", file, line);  // issue 19: host_reads.cpp
    if (dd && sd) shadow_device_copy(dst, src, bytes);
    else if (dd) shadow_host_write(dst, bytes, HostWrite::Copy);
    return cudaSuccess;
  }
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (!check_side(dst, bytes, dst_dev, "the destination", kind, file, line)) return cudaErrorInvalidValue;
  if (!check_side(src, bytes, src_dev, "the source", kind, file, line)) return cudaErrorInvalidValue;
  if (src_dev && !dst_dev) device_to_host_copy(bytes, kind_name(kind), file, line);  // issue 19: host_reads.cpp
  std::memmove(dst, src, bytes);
  if (dst_dev && src_dev) shadow_device_copy(dst, src, bytes);
  else if (dst_dev) shadow_host_write(dst, bytes, HostWrite::Copy);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t, const char* file, int line) {
  return cudaMemcpy(dst, src, bytes, kind, file, line);
}

cudaError_t cudaMemset(void* p, int value, size_t bytes, const char* file, int line) {
  if (bytes == 0) return cudaSuccess;
  const Alloc* a = find_alloc(p, 1);
  if (!a) return api_error(cudaErrorInvalidValue, file, line, strf("cudaMemset(%p): not device memory", p));
  if (reinterpret_cast<uintptr_t>(p) + bytes > a->data + a->bytes)
    return api_error(cudaErrorInvalidValue, file, line, strf("cudaMemset of %zu bytes overruns %s", bytes, alloc_str(*a).c_str()));
  Access access;
  std::memset(p, value, bytes);
  shadow_host_write(p, bytes, HostWrite::Memset);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t, const char* file, int line) {
  return cudaMemset(p, value, bytes, file, line);
}

cudaError_t cudaGetLastError() {
  cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return t_last_error; }

// ---- managed, stream-ordered, pitched and symbol memory --------------------------------------

cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned flags, const char* file, int line) {
  return malloc_managed(p, bytes, 1, nullptr, flags, file, line);
}

namespace cudasim {
namespace detail {
cudaError_t malloc_managed(void** p, size_t bytes, size_t elem, const char* type, unsigned flags, const char* file, int line) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return api_error(cudaErrorInvalidValue, file, line, strf("cudaMallocManaged: flags %u (use cudaMemAttachGlobal)", flags));
  cudaError_t e = malloc_typed(p, bytes, elem, type, file, line);
  if (e != cudaSuccess) return e;
  Registry& r = reg();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    protect(r.live[reinterpret_cast<uintptr_t>(*p)], true);  // readable and writable: host code may use it
    managed().insert(reinterpret_cast<uintptr_t>(*p));
  }
  std::memset(*p, 0, bytes);
  shadow_host_write(*p, bytes, HostWrite::Memset);
  return cudaSuccess;
}
}  // namespace detail
}  // namespace cudasim

cudaError_t cudaMemPrefetchAsync(const void* p, size_t bytes, int device, cudaStream_t, const char* file, int line) {
  const Alloc* a = find_alloc(p, 1);
  if (!is_managed(a))
    return api_error(cudaErrorInvalidValue, file, line,
                     strf("cudaMemPrefetchAsync(%p): not memory from cudaMallocManaged", p));
  if (reinterpret_cast<uintptr_t>(p) + bytes > a->data + a->bytes)
    return api_error(cudaErrorInvalidValue, file, line, strf("cudaMemPrefetchAsync of %zu bytes overruns %s", bytes, alloc_str(*a).c_str()));
  if (device != 0 && device != cudaCpuDeviceId)
    return api_error(cudaErrorInvalidDevice, file, line, strf("cudaMemPrefetchAsync to device %d; the simulator is device 0", device));
  return cudaSuccess;  // one memory: nothing to move
}

cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, int) { return cudaSuccess; }

// Stream-ordered allocation: launches are synchronous, so the stream's order is program order.
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t, const char* file, int line) {
  return malloc_typed(p, bytes, 1, nullptr, file, line);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t, const char* file, int line) { return cudaFree(p, file, line); }

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned flags, const char* file, int line) {
  if (flags & cudaHostAllocMapped)
    return api_error(cudaErrorInvalidValue, file, line,
                     "cudaHostAlloc with cudaHostAllocMapped: kernels on the simulator cannot read host memory; use "
                     "cudaMallocManaged, or cudaMalloc and cudaMemcpy");
  return cudaMallocHost(p, bytes, file, line);
}

cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height, const char* file, int line) {
  *pitch = (std::max<size_t>(width, 1) + 255) & ~size_t(255);  // rows start on 256-byte boundaries, as on GPUs
  return malloc_typed(p, *pitch * height, 1, nullptr, file, line);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, const char* file, int line) {
  if (width > dpitch || width > spitch)
    return api_error(cudaErrorInvalidPitchValue, file, line,
                     strf("cudaMemcpy2D: a row of %zu bytes is wider than the pitch (dpitch %zu, spitch %zu)", width, dpitch, spitch));
  if (height && find_alloc(src, 1) && (kind == cudaMemcpyDeviceToHost || (kind == cudaMemcpyDefault && !find_alloc(dst, 1))))
    device_to_host_copy(width * height, "cudaMemcpy2D", file, line);  // issue 19: host_reads.cpp
  for (size_t row = 0; row < height; ++row) {
    cudaError_t e = cudaMemcpy(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width, kind,
                               file, line);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t, const char* file, int line) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind, file, line);
}
cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height, const char* file, int line) {
  if (width > pitch)
    return api_error(cudaErrorInvalidPitchValue, file, line, strf("cudaMemset2D: width %zu is larger than the pitch %zu", width, pitch));
  for (size_t row = 0; row < height; ++row) {
    cudaError_t e = cudaMemset(static_cast<char*>(p) + row * pitch, value, width, file, line);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

namespace cudasim {
namespace detail {
// A __device__ or __constant__ variable is an ordinary variable of the program on the simulator
// (kernels read it directly); the other side of the copy is host or device memory per `kind`.
cudaError_t copy_symbol(void* symbol, size_t symbol_bytes, const char* what, void* other, size_t count, size_t offset,
                        cudaMemcpyKind kind, bool to_symbol, const char* file, int line) {
  if (offset + count > symbol_bytes)
    return api_error(cudaErrorInvalidValue, file, line,
                     strf("%s: copying %zu bytes at offset %zu overruns the symbol, which has %zu bytes", what, count, offset,
                          symbol_bytes));
  bool other_device = to_symbol ? kind == cudaMemcpyDeviceToDevice : kind == cudaMemcpyDeviceToDevice;
  bool kind_ok = to_symbol ? (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault)
                           : (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault);
  if (!kind_ok)
    return api_error(cudaErrorInvalidMemcpyDirection, file, line,
                     strf("%s with %s: the symbol is device memory, so the copy goes %s", what, kind_name(kind),
                          to_symbol ? "HostToDevice (or DeviceToDevice)" : "DeviceToHost (or DeviceToDevice)"));
  const Alloc* a = find_alloc(other, 1);
  if (kind == cudaMemcpyDefault) other_device = a && !is_managed(a);
  if (other_device) {
    if (!a)
      return api_error(cudaErrorInvalidValue, file, line,
                       strf("%s with cudaMemcpyDeviceToDevice: %p is not device memory", what, other));
    if (reinterpret_cast<uintptr_t>(other) + count > a->data + a->bytes)
      return api_error(cudaErrorInvalidValue, file, line, strf("%s: %zu bytes overrun %s", what, count, alloc_str(*a).c_str()));
  } else if (a && !is_managed(a)) {
    return api_error(cudaErrorInvalidValue, file, line,
                     strf("%s: %p is device memory (%s), but the copy direction says host memory. Check the cudaMemcpyKind.",
                          what, other, alloc_str(*a).c_str()));
  }
  Access access;
  char* sym = static_cast<char*>(symbol) + offset;
  if (to_symbol) std::memmove(sym, other, count);
  else {
    if (!other_device) device_to_host_copy(count, "cudaMemcpyFromSymbol", file, line);  // issue 19: host_reads.cpp
    std::memmove(other, sym, count);
    if (a) shadow_host_write(other, count, HostWrite::Copy);
  }
  return cudaSuccess;
}
}  // namespace detail
}  // namespace cudasim

// Device memory shadows: one shadow cell per word of every device buffer, kept from cudaMalloc to
// cudaFree, with what host copies and memsets wrote; the memory checker's longest-lived state.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "checker_state.h"
#include "events.h"

namespace cudasim {
namespace detail {

static size_t page_sz() {
  static size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

Cell* map_cells(size_t n) {
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

std::mutex g_dev_mu;
std::map<uintptr_t, DevShadow> g_dev;

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
    const Cell& cell = d->cells[c / 4];
    if (cell.w.run == 0 || !((cell.w.flags & kAtomic) || (cell.init & kInitViaAtomic))) return false;
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

}  // namespace cudasim

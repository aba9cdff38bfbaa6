// Device memory shadows, kept from cudaMalloc to cudaFree: per word of every device buffer, two
// bytes that say which bytes hold a value and who wrote them (what host copies and memsets wrote
// too), and a 64-byte cell for the checker's stamps. Both are anonymous memory that costs host RAM
// only where it is touched: the init words where something wrote, the cells where a checked kernel
// accessed. With the checks off (CUDASIM_CHECKS=0) neither exists. The memory checker's
// longest-lived state.
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
  if (m == MAP_FAILED) out_of_memory("shadow_memory", "the simulator could not allocate its shadow memory (out of memory)");
  return static_cast<Cell*>(m);
}
static void unmap_cells(Cell* c, size_t n) {
  size_t len = (std::max<size_t>(n, 1) * sizeof(Cell) + page_sz() - 1) / page_sz() * page_sz();
  munmap(c, len);
}
static size_t init_len(size_t n) { return (std::max<size_t>(n, 1) * sizeof(uint16_t) + page_sz() - 1) / page_sz() * page_sz(); }
static uint16_t* map_init(size_t n) {
  void* m = mmap(nullptr, init_len(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) out_of_memory("shadow_memory", "the simulator could not allocate its shadow memory (out of memory)");
  return static_cast<uint16_t*>(m);
}

std::mutex g_dev_mu;
std::map<uintptr_t, DevShadow> g_dev;

void shadow_alloc(uintptr_t data, size_t bytes, int id, uintptr_t map_lo, uintptr_t map_hi) {
  size_t n = (bytes + 3) / 4;
  std::lock_guard<std::mutex> lock(g_dev_mu);
  const bool checks = options().checks;
  g_dev[data] = DevShadow{data, bytes, id, map_lo, map_hi, checks ? map_cells(n) : nullptr, n, checks ? map_init(n) : nullptr};
}
void shadow_free(uintptr_t data) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  auto it = g_dev.find(data);
  if (it == g_dev.end()) return;
  if (it->second.cells) unmap_cells(it->second.cells, it->second.ncells);
  if (it->second.init) munmap(it->second.init, init_len(it->second.ncells));
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
  if (!d || !d->init) return;
  for (uintptr_t c = (lo - d->data) & ~uintptr_t(3); d->data + c < hi; c += 4) {
    uint16_t& init = d->init[c / 4];
    uint32_t m = byte_mask(d->data + c, lo, hi);
    init = uint16_t(set_dev_init(init, m, unsigned(how)));
  }
}

void shadow_kernel_write(uintptr_t p, size_t bytes, bool via_atomic) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  DevShadow* d = dev_of(p);
  if (!d || !d->init) return;
  for (uintptr_t c = (p - d->data) & ~uintptr_t(3); d->data + c < p + bytes; c += 4) {
    uint16_t& init = d->init[c / 4];
    init = uint16_t(set_dev_init(init, byte_mask(d->data + c, p, p + bytes), 3) | (via_atomic ? kInitViaAtomic : (init & kInitViaAtomic)));
  }
}

void shadow_device_copy(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  DevShadow* ds = dev_of(reinterpret_cast<uintptr_t>(dst));
  DevShadow* ss = dev_of(reinterpret_cast<uintptr_t>(src));
  if (!ds || !ss || !ds->init || !ss->init) return;
  uintptr_t d0 = reinterpret_cast<uintptr_t>(dst) - ds->data, s0 = reinterpret_cast<uintptr_t>(src) - ss->data;
  for (size_t i = 0; i < bytes; ++i) {  // byte by byte: the two ranges need not be aligned alike
    const uint16_t sc = ss->init[(s0 + i) / 4];
    unsigned sb = unsigned((s0 + i) & 3), db = unsigned((d0 + i) & 3);
    uint16_t& dc = ds->init[(d0 + i) / 4];
    unsigned kind = (sc & (1u << sb)) ? (sc >> (8 + 2 * sb)) & 3 : 0;
    dc = uint16_t(dc & ~((1u << db) | (3u << (8 + 2 * db))));
    if (kind) dc = uint16_t(dc | (1u << db) | (kind << (8 + 2 * db)));
  }
}

bool written_by_atomic(uintptr_t p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_dev_mu);
  DevShadow* d = dev_of(p);
  if (!d || !d->init) return false;
  for (uintptr_t c = (p - d->data) & ~uintptr_t(3); d->data + c < p + bytes; c += 4)
    if (!(d->init[c / 4] & kInitViaAtomic)) return false;
  return true;
}

}  // namespace detail

bool last_writers(const void* p, size_t bytes, Writer* out) {
  using namespace detail;
  std::lock_guard<std::mutex> lock(g_dev_mu);
  uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  DevShadow* d = dev_of(lo);
  if (!d || !d->init || lo + bytes > d->data + d->bytes) return false;
  for (size_t i = 0; i < bytes; ++i) {
    size_t off = lo - d->data + i;
    uint32_t init = d->init[off / 4];
    unsigned b = unsigned(off & 3);
    out[i] = (init & (1u << b)) ? Writer((init >> (8 + 2 * b)) & 3) : Writer::None;
  }
  return true;
}

}  // namespace cudasim

// Shared memory: the worker's arena for a block's __shared__ variables and its dynamic shared
// memory, with the garbage they start as and the canaries that find writes past their ends.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "scheduler.h"
#include "events.h"

namespace cudasim {
namespace detail {

// ---- static shared memory ----------------------------------------------------------------------
// Each worker has an arena whose top touches an inaccessible page. The block's `__shared__`
// arrays are placed downwards from the top in the order threads first reach their declarations,
// with canary bytes between them: reading past the first array faults at once, and writes past
// any array are found when the block ends.

static constexpr size_t kSharedLimit = 48 * 1024;
static constexpr size_t kSharedArena = 64 * 1024;
static constexpr unsigned char kSharedCanary = 0xA5;

// What uninitialized shared memory holds differs per thread schedule, so that a result that
// depends on garbage is not hidden by a lucky fill: 0xCD bytes (-4.3e8 as a float, -842150451 as
// an int) in the first schedule, 0x7F bytes (3.4e38, 2139062143) in the second, random bytes in
// the third.
static void fill_garbage(Worker& w, unsigned char* p, size_t n) {
  int s = w.grid ? w.grid->schedule_index : 0;
  if (s == 0) std::memset(p, 0xCD, n);
  else if (s == 1) std::memset(p, 0x7F, n);
  else
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(splitmix(w.rng) >> 56);
}

void* static_shared_raw(size_t bytes, size_t align, size_t elem, const char* name, const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse("a __shared__ variable", file, line);
  Worker& w = *wk;
  // One declaration is one variable per block; the size tells apart the instantiations of a
  // template (block_sum<32> and block_sum<64> declare different arrays at the same line).
  for (const SharedArray& a : w.shared_arrays)
    if (a.line == line && a.name == name && a.file == file && a.bytes == bytes) return a.p;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!w.sh_guard) {
    void* m = mmap(nullptr, kSharedArena + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) out_of_memory("shared_memory", "the simulator could not allocate shared memory (out of memory)");
    w.sh_guard = static_cast<unsigned char*>(m) + kSharedArena;
    mprotect(w.sh_guard, page, PROT_NONE);
    w.sh_lo = reinterpret_cast<uintptr_t>(m);
    w.sh_len = kSharedArena;
  }
  align = std::max<size_t>(align, 16);
  unsigned char* top = w.shared_arrays.empty() ? w.sh_guard : static_cast<unsigned char*>(w.shared_arrays.back().p) - 16;
  uintptr_t start = (reinterpret_cast<uintptr_t>(top) - std::max<size_t>(bytes, 1)) & ~uintptr_t(align - 1);
  size_t used = size_t(w.sh_guard - reinterpret_cast<unsigned char*>(start));
  // The limit applies to what the variables need, as on the GPU, not to the arena's canary gaps
  // and 16-byte alignment: two 24 KiB arrays fit.
  size_t declared = bytes;
  for (const SharedArray& a : w.shared_arrays) declared += a.bytes;
  if (declared + w.grid->shmem > kSharedLimit)
    thread_fault(w, self_thread(), Kind::shared_memory_limit,
                 strf("%s: the block needs more than 49152 bytes (48 KiB) of shared memory (%zu bytes of __shared__ variables "
                      "so far, %zu dynamic). The last one: %s (%zu bytes) at %s.",
                      kernel_str(w.grid->site).c_str(), declared, w.grid->shmem, name, bytes, where(file, line).c_str()),
                 where(file, line), "",
                 Facts().set("limit", kSharedLimit).set("declared", declared).set("dynamic", w.grid->shmem).set("name", name)
                     .set("bytes", bytes));
  if (used > kSharedArena)
    thread_fault(w, self_thread(), Kind::shared_arena_full,
                 strf("%s: %zu __shared__ variables do not fit the simulator's shared-memory arena (each takes at least 32 "
                      "bytes there). The last one: %s at %s.",
                      kernel_str(w.grid->site).c_str(), w.shared_arrays.size() + 1, name, where(file, line).c_str()),
                 where(file, line), "",
                 Facts().set("count", w.shared_arrays.size() + 1).set("name", name).set("arena", kSharedArena));
  unsigned char* p = reinterpret_cast<unsigned char*>(start);
  std::memset(p - 16, kSharedCanary, 16);                   // below: the gap to the next array
  fill_garbage(w, p, bytes);                                // garbage at the start, as on the GPU
  std::memset(p + bytes, kSharedCanary, size_t(top - p) - bytes);  // above: slack and gap
  w.shared_arrays.push_back(SharedArray{p, bytes, elem, name, file, line});
  return p;
}

// "" when every canary of the arena is intact; else which array was overrun.
std::string static_shared_overrun(const Worker& w) {
  for (size_t i = 0; i < w.shared_arrays.size(); ++i) {
    const SharedArray& a = w.shared_arrays[i];
    const unsigned char* p = static_cast<const unsigned char*>(a.p);
    const unsigned char* above = i == 0 ? w.sh_guard : static_cast<const unsigned char*>(w.shared_arrays[i - 1].p);
    for (const unsigned char* q = p + a.bytes; q < above; ++q)
      if (*q != kSharedCanary)
        return strf("a thread wrote past the end of __shared__ %s (%zu bytes, declared at %s)", a.name, a.bytes,
                    where(a.file, a.line).c_str());
    if (i + 1 == w.shared_arrays.size())
      for (const unsigned char* q = p - 16; q < p; ++q)
        if (*q != kSharedCanary)
          return strf("a thread wrote before the start of __shared__ %s (declared at %s)", a.name, where(a.file, a.line).c_str());
  }
  return "";
}

// Dynamic shared memory ends where an inaccessible page begins, so reading or writing past the
// bytes the launch asked for faults at once (alignment slack aside: canaries there, and in front,
// are checked when the block ends).
static constexpr size_t kDynSharedMax = 48 * 1024;
static constexpr size_t kDynSharedFront = 64;
unsigned char* place_dynamic_shared(Worker& w, size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!w.dyn_guard) {
    size_t len = (kDynSharedMax + 16 + kDynSharedFront + page - 1) / page * page + page;
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) out_of_memory("shared_memory", "the simulator could not allocate shared memory (out of memory)");
    w.dyn_guard = static_cast<unsigned char*>(m) + len - page;
    mprotect(w.dyn_guard, page, PROT_NONE);
    w.dyn_lo = reinterpret_cast<uintptr_t>(m);
    w.dyn_len = len - page;
  }
  size_t padded = (std::max<size_t>(bytes, 1) + 15) & ~size_t(15);
  unsigned char* start = w.dyn_guard - padded;
  std::memset(start - kDynSharedFront, kSharedCanary, kDynSharedFront);
  fill_garbage(w, start, bytes);  // garbage at the start, as on the GPU
  std::memset(start + bytes, kSharedCanary, padded - bytes);
  w.dyn_start = start;
  w.dyn_bytes = bytes;
  w.dyn_name = nullptr;
  w.dyn_elem = 0;
  return start;
}

unsigned char* dynamic_shared(const char* name, size_t elem) {
  Worker* w = tl_worker;
  if (!w || !tl_thread) device_misuse("dynamic shared memory", nullptr, 0);
  if (!w->dyn_name) {
    w->dyn_name = name;
    w->dyn_elem = elem;
  }
  return w->block.dyn_shared;
}

std::string dynamic_shared_overrun(const Worker& w) {
  const unsigned char* s = w.dyn_start;
  for (size_t i = 0; i < kDynSharedFront; ++i)
    if (s[-1 - (long)i] != kSharedCanary)
      return strf("a thread wrote to byte -%zu, before the start of the %zu bytes of dynamic shared memory", i + 1, w.dyn_bytes);
  for (const unsigned char* p = s + w.dyn_bytes; p < w.dyn_guard; ++p)
    if (*p != kSharedCanary)
      return strf("a thread wrote at byte %zu of dynamic shared memory, but the launch asked for %zu bytes", size_t(p - s),
                  w.dyn_bytes);
  return "";
}

}  // namespace detail
}  // namespace cudasim

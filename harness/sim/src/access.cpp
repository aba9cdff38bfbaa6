// The access front end: the __tsan_* entry points that instrumented device code calls, and where
// each access of an observed launch lands (shared memory, which device buffer) before the observers see it.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "checker_state.h"
#include "events.h"
#include "hazard_check.h"  // the checker's per-access check, inlined into on_access
#include "scheduler.h"     // watch_spin

namespace cudasim {
namespace detail {

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

// ---- the access front end ----------------------------------------------------------------------
// Every instrumented access of an observed launch comes here: it finds where the access lands
// (static or dynamic shared memory, or which device buffer) and raises it to the observers.

bool g_observed_launch = false;

// The bytes above the shared arenas that are certainly their guard page (shared_memory.cpp).
static constexpr uintptr_t kSharedGuardBytes = 4096;

// Where an arena address outside every live buffer's slot lands: no buffer (data and bytes 0), so
// that the checker's bounds test fails for it and the report names the nearest or freed buffer.
static DevShadow g_no_buffer{};

// The device buffer whose slot (the gaps around it, front canaries, data, slack) holds `a`, so
// that an out-of-bounds access is blamed on the buffer it strayed from; g_no_buffer for the rest of
// the device memory arena; null for memory that is not device memory (the built-in variables, host
// or __device__ variables).
static inline DevShadow* device_region(uintptr_t a) {
  Checker& k = g_chk;
  DevShadow* d = k.mru;
  if (d && a - d->map_lo >= d->map_hi - d->map_lo) {
    std::swap(k.mru, k.mru2);
    d = k.mru;
  }
  if (d && a - d->map_lo < d->map_hi - d->map_lo) return d;
  if (a - g_arena_lo >= g_arena_len) return nullptr;
  // The slots do not overlap and are sorted as their buffers are: the slot holding `a` is that of
  // the first buffer after it (its front gap) or of the last one before it.
  d = nullptr;
  auto it = std::upper_bound(k.devs.begin(), k.devs.end(), a, [](uintptr_t x, const DevShadow* s) { return x < s->data; });
  if (it != k.devs.end() && a >= (*it)->map_lo) d = *it;
  else if (it != k.devs.begin() && a < (*(it - 1))->map_hi) d = *(it - 1);
  if (!d) return &g_no_buffer;
  k.mru2 = k.mru;
  k.mru = d;
  return d;
}

static __thread unsigned char tl_atomic_scope = kScopeDevice;
void set_atomic_scope(unsigned char scope) { tl_atomic_scope = scope; }

// Memory orders as fences (tsan passes GCC's __ATOMIC_* values): a release order is a fence of the
// atomic's scope before it, an acquire order one after it.
static inline bool releases(int mo) { return mo == __ATOMIC_RELEASE || mo == __ATOMIC_ACQ_REL || mo == __ATOMIC_SEQ_CST; }
static inline bool acquires(int mo) {
  return mo == __ATOMIC_ACQUIRE || mo == __ATOMIC_CONSUME || mo == __ATOMIC_ACQ_REL || mo == __ATOMIC_SEQ_CST;
}

static inline void raise_fence(Worker& w, Thread& t, unsigned char scope) { Observers::fence(w, t, scope); }

// `how`: kHow* bits (events.h); `mo`: an atomic's memory order (-1: not an atomic).
__attribute__((noinline)) static void on_access(uintptr_t a, size_t size, bool write, bool read, bool atomic, void* ra,
                                                uint8_t how = 0, int mo = __ATOMIC_RELAXED) {
  Worker* w = tl_worker;
  if (__builtin_expect(!w || !(w->observed || w->spin_watch), 1)) return;
  ThreadView* tv = tl_thread;
  if (!tv) return;
  Thread& t = *reinterpret_cast<Thread*>(tv);
  if (a - t.stack_lo < w->stack_bytes) return;  // the thread's own locals
  if (w->spin_watch) watch_spin(*w, t, a, write, atomic, ra);
  if (!w->observed) return;
  const unsigned char scope = atomic ? tl_atomic_scope : (unsigned char)kScopeDevice;
  if (atomic && releases(mo)) raise_fence(*w, t, scope);
  Space space;
  DevShadow* region = nullptr;
  if (a - w->sh_lo < w->sh_len) space = Space::Shared;
  else if (a - w->dyn_lo < w->dyn_len) space = Space::Dynamic;
  else if ((region = device_region(a))) space = Space::Device;
  // Just past the top of the static arena or of the dynamic shared memory (`sdata[tid + s]` one
  // element too far) is a guard page: the checker reports the array and the index before the load
  // would fault there, which the crash handler could only describe in bytes.
  else if (a - (w->sh_lo + w->sh_len) < kSharedGuardBytes && w->sh_len) space = Space::Shared;
  else if (a - (w->dyn_lo + w->dyn_len) < kSharedGuardBytes && w->dyn_len) space = Space::Dynamic;
  else {
    // Memory with no shadow (a __device__ variable): an atomic there still synchronises.
    if (atomic) {
      MemoryChecker::unshadowed_atomic(*w, t, scope);
      if (acquires(mo)) raise_fence(*w, t, scope);
    }
    return;
  }
  Observers::access(AccessEvent{*w, t, a, size, pc32(ra), space, write, read, atomic, region, how, uint8_t(atomic ? scope : 0)});
  if (atomic && acquires(mo)) raise_fence(*w, t, scope);
}

void scoped_fence(unsigned char scope) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  Worker* w = tl_worker;
  // The caller is the user's __threadfence*() (inlined from runtime.h): its line names the fence.
  if (w && tl_thread) Observers::fence(*w, *reinterpret_cast<Thread*>(tl_thread), scope, pc32(__builtin_return_address(0)));
}

}  // namespace detail
}  // namespace cudasim

// ---- the instrumentation's entry points -------------------------------------------------------
// The names and signatures are ThreadSanitizer's compiler interface (GCC and Clang emit the same
// calls). Accesses outside a checked kernel return at the first test. On macOS Apple's clang emits
// the same calls; Mach-O's leading underscore is added to these C names and to the calls alike,
// and the definitions are linked into the program itself, so two-level namespaces (which bind a
// symbol to the dylib that defines it) never come into play.

// An atomic in a block that the checker skips (a sampled launch, sampling.cpp) is noted: what the
// launch wrote may then legally depend on the order of its atomics.
bool cudasim::detail::g_unchecked_block = false;
bool cudasim::detail::g_unchecked_atomic = false;
static inline __attribute__((always_inline)) void front_atomic() {
  if (__builtin_expect(cudasim::detail::g_unchecked_block, 0)) cudasim::detail::g_unchecked_atomic = true;
}

// The fast path (no checked launch in flight, CUDASIM_CHECKS=0 or the unchecked schedules) costs
// each access a call, one load of a plain global and a return: cudasim::detail::on_access reads
// thread-locals and saves registers before its first test, which made it the top of a perf
// profile of the fast path (scripts/bench_sim.py).
static inline __attribute__((always_inline)) void front_access(uintptr_t a, size_t size, bool write, bool read, bool atomic,
                                                            void* ra, uint8_t how = 0, int mo = __ATOMIC_RELAXED) {
  if (__builtin_expect(cudasim::detail::g_observed_launch, 0))
    cudasim::detail::on_access(a, size, write, read, atomic, ra, how, mo);
}
#define RA __builtin_return_address(0)

namespace cudasim {
namespace detail {
void read_only_load(const void* p, size_t bytes, void* out) {
  ::front_access(reinterpret_cast<uintptr_t>(p), bytes, false, true, false, RA, kHowReadOnly);
  std::memcpy(out, p, bytes);
}
}  // namespace detail
}  // namespace cudasim

using cudasim::detail::kHowCas;
using cudasim::detail::kHowVolatile;

extern "C" {
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

// Volatile accesses are strong (relaxed, system scope) in the PTX memory model: against an atomic
// of the same bytes they are not a race. Against plain accesses and each other they are checked
// like plain ones (the old "volatile last warp" idiom stays a race).
#define CUDASIM_PLAIN(n)                                                                             \
  void __tsan_read##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); }   \
  void __tsan_write##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); }  \
  void __tsan_unaligned_read##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); } \
  void __tsan_unaligned_write##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); } \
  void __tsan_volatile_read##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA, kHowVolatile); }  \
  void __tsan_volatile_write##n(void* a) { front_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA, kHowVolatile); }
CUDASIM_PLAIN(1)
CUDASIM_PLAIN(2)
CUDASIM_PLAIN(4)
CUDASIM_PLAIN(8)
CUDASIM_PLAIN(16)
#undef CUDASIM_PLAIN
void __tsan_read_range(void* a, unsigned long n) { front_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, RA); }
void __tsan_write_range(void* a, unsigned long n) { front_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, RA); }
void* __tsan_memcpy(void* d, const void* s, unsigned long n) {
  front_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, RA);
  front_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memcpy(d, s, n);
}
void* __tsan_memmove(void* d, const void* s, unsigned long n) {
  front_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, RA);
  front_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memmove(d, s, n);
}
void* __tsan_memset(void* d, int v, unsigned long n) {
  front_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, RA);
  return std::memset(d, v, n);
}
void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) {}

// Atomics: perform the operation (sequentially consistent on the CPU, which is at least as strong
// as any order the code asked for), then record it with the order it asked for (`mo`): release
// and acquire orders are fences around it in the checker's model.
#define CUDASIM_ATOMICS(bits, T)                                                                               \
  T __tsan_atomic##bits##_load(const volatile T* a, int mo) {                                                  \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), false, true, true, RA, 0, mo);                        \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                               \
  }                                                                                                            \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int mo) {                                               \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, false, true, RA, 0, mo);                        \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                  \
  }                                                                                                            \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int mo) {                                               \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, false, true, RA, 0, mo);                        \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                        \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int mo) {                                              \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int mo) {                                              \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int mo) {                                              \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int mo) {                                               \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                          \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int mo) {                                              \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int mo) {                                             \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, 0, mo);                         \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                        \
  }                                                                                                            \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int mo, int) {                   \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, kHowCas, mo);                   \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
  }                                                                                                            \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int mo, int) {                     \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, kHowCas, mo);                   \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
  }                                                                                                            \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int mo, int) {                         \
    front_atomic();                                                                                            \
    front_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, RA, kHowCas, mo);                   \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                          \
    return c;                                                                                                  \
  }
CUDASIM_ATOMICS(8, uint8_t)
CUDASIM_ATOMICS(16, uint16_t)
CUDASIM_ATOMICS(32, uint32_t)
CUDASIM_ATOMICS(64, uint64_t)
#undef CUDASIM_ATOMICS
}

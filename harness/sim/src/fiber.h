// The one place that knows how fibers switch. Three implementations:
// - native (x86-64 System V, in fiber.cpp): saves the six callee-saved registers on the running
//   stack and swaps stack pointers, about a dozen instructions. Used where Boost.Context is
//   enabled (CUDASIM_FIBERS=AUTO or BOOST) and the machine is x86-64: a perf profile of the fast
//   path showed Boost's jump_fcontext spending most of its time in ldmxcsr/fldcw, which reload
//   floating-point control words that no simulated thread changes.
// - Boost.Context's fcontext on the other architectures Boost supports;
// - ucontext, the zero-dependency fallback (it makes a system call per switch).
#pragma once

#include "private.h"

#include <cstddef>

#if CUDASIM_USE_BOOST_CONTEXT && defined(__x86_64__) && defined(__ELF__) && !defined(_WIN32)
#define CUDASIM_NATIVE_SWITCH 1
#elif CUDASIM_USE_BOOST_CONTEXT
#include <boost/context/detail/fcontext.hpp>
#else
#include <ucontext.h>
#endif

#if CUDASIM_NATIVE_SWITCH
#include <cstdint>

// fiber.cpp: stores the stack pointer of the suspended context at *save and continues the one
// whose stack pointer is `next`.
extern "C" void cudasim_fiber_switch(void** save, void* next) __attribute__((visibility("hidden")));
// fiber.cpp: where a new fiber's first switch lands; it calls entry (rbx) with arg (r12).
extern "C" void cudasim_fiber_start() __attribute__((visibility("hidden")));
#endif

namespace cudasim {
namespace detail {

#if CUDASIM_NATIVE_SWITCH
struct FiberCtx {
  void* sp = nullptr;  // the suspended context's stack pointer, its registers stored above it
};
#elif CUDASIM_USE_BOOST_CONTEXT
struct FiberCtx {
  boost::context::detail::fcontext_t ctx = nullptr;  // the context, while suspended
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
};
#else
struct FiberCtx {
  ucontext_t uc;
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
};
#endif

// Prepares `f` to run entry(arg) on the stack [lo, lo + size) when first switched to. The entry
// never returns; it ends by switching away for good.
#if CUDASIM_NATIVE_SWITCH
// What a suspended native context holds at its stack pointer, lowest address first: the pushes of
// cudasim_fiber_switch in reverse, then the address it continues at. Inline: every thread of
// every block gets a fresh one.
struct NativeFrame {
  void* r15;
  void* r14;
  void* r13;
  void* r12;
  void* rbx;
  void* rbp;
  void* ret;
};

// A new fiber's first switch continues at cudasim_fiber_start with entry in rbx and arg in r12,
// and the stack pointer 16-byte aligned, so that its call of entry(arg) follows the ABI.
inline void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + size) & ~uintptr_t(15);
  NativeFrame* fr = reinterpret_cast<NativeFrame*>(top - sizeof(NativeFrame));
  *fr = NativeFrame{nullptr, nullptr, nullptr, arg, reinterpret_cast<void*>(entry), nullptr,
                    reinterpret_cast<void*>(&cudasim_fiber_start)};
  f.sp = fr;
}
#else
void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg);
#endif

// Suspends the running context into `from` and continues `to`. Fibers switch to each other
// directly (one switch per thread per barrier), and to the scheduler's context when a sweep ends.
#if CUDASIM_NATIVE_SWITCH
inline void fiber_switch(FiberCtx& from, FiberCtx& to) { cudasim_fiber_switch(&from.sp, to.sp); }
#else
void fiber_switch(FiberCtx& from, FiberCtx& to);
#endif

// Starts loading what switching to the suspended `f` will read first: its saved registers (the
// NativeFrame at its stack pointer). A sweep calls it for the thread after the next, so that
// resuming a thread does not wait for its stack to come in from the L2 cache. One prefetch: two
// or three (the rest of the frame, the frames above) measured no faster on the p14 benchmark.
#if CUDASIM_NATIVE_SWITCH
inline void fiber_prefetch(const FiberCtx& f) { __builtin_prefetch(f.sp); }
#else
inline void fiber_prefetch(const FiberCtx&) {}
#endif

// "native x86-64", "boost.context" or "ucontext": what --stats and bench_sim.py report.
const char* fiber_name();

}  // namespace detail
}  // namespace cudasim

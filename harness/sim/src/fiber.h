// The one place that knows how fibers switch. Three implementations:
// - native (in fiber.cpp), for x86-64 System V and AArch64 (AAPCS64), on ELF (Linux) and Mach-O
//   (macOS): saves the callee-saved registers on the running stack and swaps stack pointers, about
//   a dozen instructions on x86-64, two dozen on AArch64. Used where Boost.Context is enabled
//   (CUDASIM_FIBERS=AUTO or BOOST) and the machine is one of those two: a perf profile of the fast
//   path showed Boost's jump_fcontext spending most of its time in ldmxcsr/fldcw, which reload
//   floating-point control words that no simulated thread changes.
// - Boost.Context's fcontext on the other architectures Boost supports;
// - ucontext, the zero-dependency fallback (it makes a system call per switch; macOS marks it
//   deprecated, and its headers refuse it without _XOPEN_SOURCE).
#pragma once

#include "private.h"

#include <cstddef>

#if CUDASIM_USE_BOOST_CONTEXT && (defined(__x86_64__) || defined(__aarch64__)) && (defined(__ELF__) || defined(__APPLE__))
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
// fiber.cpp: where a new fiber's first switch lands; it calls entry with arg, which NativeFrame's
// fiber_make put in two callee-saved registers (x86-64: rbx and r12; AArch64: x19 and x20).
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
// What a suspended native context holds at its stack pointer, lowest address first: what
// cudasim_fiber_switch stored, and the address it continues at. Inline: every thread of every
// block gets a fresh one.
#if defined(__x86_64__)
struct NativeFrame {  // the pushes, in reverse, then the return address the call pushed
  void* r15;
  void* r14;
  void* r13;
  void* r12;
  void* rbx;  // a new fiber's entry
  void* rbp;
  void* ret;
};
static_assert(sizeof(NativeFrame) == 56, "fiber.cpp's x86-64 switch pushes six registers");
inline NativeFrame native_start_frame(void (*entry)(void*), void* arg, void* start) {
  return NativeFrame{nullptr, nullptr, nullptr, arg, reinterpret_cast<void*>(entry), nullptr, start};
}
#else
struct NativeFrame {  // AAPCS64's callee-saved registers, as the switch's stp instructions store them
  void* x[10];  // x19..x28; a new fiber's entry in x19, its argument in x20
  void* fp;     // x29
  void* lr;     // x30: where the context continues
  double d[8];  // d8..d15, the low halves of v8..v15 (the upper halves are caller-saved)
};
static_assert(sizeof(NativeFrame) == 160, "fiber.cpp's AArch64 switch stores 20 registers");
inline NativeFrame native_start_frame(void (*entry)(void*), void* arg, void* start) {
  NativeFrame f{};
  f.x[0] = reinterpret_cast<void*>(entry);
  f.x[1] = arg;
  f.lr = start;
  return f;
}
#endif

// A new fiber's first switch continues at cudasim_fiber_start with entry and arg in callee-saved
// registers, and the stack pointer 16-byte aligned (both ABIs ask that of a call).
inline void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + size) & ~uintptr_t(15);
  NativeFrame* fr = reinterpret_cast<NativeFrame*>(top - sizeof(NativeFrame));
  *fr = native_start_frame(entry, arg, reinterpret_cast<void*>(&cudasim_fiber_start));
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

// Points the context of a fiber that is not made yet at `harmless`, memory that fiber_prefetch
// may touch at no cost (a thread that has not started has no stack to prefetch, and an address
// left from an earlier block, or null, makes the prefetch walk the page tables for nothing).
#if CUDASIM_NATIVE_SWITCH
inline void fiber_unmade(FiberCtx& f, void* harmless) { f.sp = harmless; }
#else
inline void fiber_unmade(FiberCtx&, void*) {}
#endif

// "native x86-64", "native aarch64", "boost.context" or "ucontext": what --stats and bench_sim.py report.
const char* fiber_name();

}  // namespace detail
}  // namespace cudasim

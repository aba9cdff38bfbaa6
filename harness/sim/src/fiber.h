// The one place that knows how fibers switch. Three implementations:
// - native (x86-64 System V, in fiber.cpp): saves the six callee-saved registers on the running
//   stack and swaps stack pointers, about a dozen instructions. Used where Boost.Context is
//   enabled (CUDASIM_FIBERS=AUTO or BOOST) and the machine is x86-64: a perf profile of the fast
//   path showed Boost's jump_fcontext spending most of its time in ldmxcsr/fldcw, which reload
//   floating-point control words that no simulated thread changes.
// - Boost.Context's fcontext on the other architectures Boost supports;
// - ucontext, the zero-dependency fallback (it makes a system call per switch).
#pragma once

#include <cstddef>

#if CUDASIM_USE_BOOST_CONTEXT && defined(__x86_64__) && defined(__ELF__) && !defined(_WIN32)
#define CUDASIM_NATIVE_SWITCH 1
#elif CUDASIM_USE_BOOST_CONTEXT
#include <boost/context/detail/fcontext.hpp>
#else
#include <ucontext.h>
#endif

#if CUDASIM_NATIVE_SWITCH
// fiber.cpp: stores the stack pointer of the suspended context at *save and continues the one
// whose stack pointer is `next`.
extern "C" void cudasim_fiber_switch(void** save, void* next) __attribute__((visibility("hidden")));
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
void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg);

// Suspends the running context into `from` and continues `to`. Fibers switch to each other
// directly (one switch per thread per barrier), and to the scheduler's context when a sweep ends.
#if CUDASIM_NATIVE_SWITCH
inline void fiber_switch(FiberCtx& from, FiberCtx& to) { cudasim_fiber_switch(&from.sp, to.sp); }
#else
void fiber_switch(FiberCtx& from, FiberCtx& to);
#endif

// "native x86-64", "boost.context" or "ucontext": what --stats and bench_sim.py report.
const char* fiber_name();

}  // namespace detail
}  // namespace cudasim

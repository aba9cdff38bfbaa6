// The one place that knows how fibers switch. Boost.Context's fcontext switches in a few
// nanoseconds; ucontext is the zero-dependency fallback (it makes a system call per switch).
#pragma once

#include <cstddef>

#if CUDASIM_USE_BOOST_CONTEXT
#include <boost/context/detail/fcontext.hpp>
#else
#include <ucontext.h>
#endif

namespace cudasim {
namespace detail {

#if CUDASIM_USE_BOOST_CONTEXT
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
void fiber_switch(FiberCtx& from, FiberCtx& to);

}  // namespace detail
}  // namespace cudasim

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
  boost::context::detail::fcontext_t ctx = nullptr;    // the fiber, while suspended
  boost::context::detail::fcontext_t sched = nullptr;  // who resumed it, while it runs
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

// Prepares `f` to run entry(arg) on the stack [lo, lo + size) when first resumed.
void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg);
// From the scheduler (whose context is `sched`): run `f` until it yields.
void fiber_resume(FiberCtx& sched, FiberCtx& f);
// From inside `f`: return to the scheduler.
void fiber_yield(FiberCtx& sched, FiberCtx& f);

}  // namespace detail
}  // namespace cudasim

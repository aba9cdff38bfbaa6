#include "fiber.h"

#include <cstdint>

namespace cudasim {
namespace detail {

#if CUDASIM_USE_BOOST_CONTEXT
namespace bc = boost::context::detail;

static void trampoline(bc::transfer_t t) {
  FiberCtx* f = static_cast<FiberCtx*>(t.data);
  f->sched = t.fctx;
  f->entry(f->arg);  // never returns: the entry ends with a final fiber_yield
}

void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg) {
  f.entry = entry;
  f.arg = arg;
  f.ctx = bc::make_fcontext(static_cast<char*>(lo) + size, size, trampoline);
}

void fiber_resume(FiberCtx&, FiberCtx& f) {
  bc::transfer_t r = bc::jump_fcontext(f.ctx, &f);
  f.ctx = r.fctx;
}

void fiber_yield(FiberCtx&, FiberCtx& f) {
  bc::transfer_t r = bc::jump_fcontext(f.sched, nullptr);
  f.sched = r.fctx;
}
#else
static void trampoline(unsigned hi, unsigned lo) {
  FiberCtx* f = reinterpret_cast<FiberCtx*>((uintptr_t(hi) << 32) | uintptr_t(lo));
  f->entry(f->arg);
}

void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg) {
  f.entry = entry;
  f.arg = arg;
  getcontext(&f.uc);
  f.uc.uc_stack.ss_sp = lo;
  f.uc.uc_stack.ss_size = size;
  f.uc.uc_link = nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(&f);
  makecontext(&f.uc, reinterpret_cast<void (*)()>(trampoline), 2, unsigned(p >> 32), unsigned(p & 0xffffffffu));
}

void fiber_resume(FiberCtx& sched, FiberCtx& f) { swapcontext(&sched.uc, &f.uc); }

void fiber_yield(FiberCtx& sched, FiberCtx& f) { swapcontext(&f.uc, &sched.uc); }
#endif

}  // namespace detail
}  // namespace cudasim

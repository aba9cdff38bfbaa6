#include "fiber.h"

#include <cstdint>

namespace cudasim {
namespace detail {

#if CUDASIM_USE_BOOST_CONTEXT
namespace bc = boost::context::detail;

static __thread FiberCtx* tl_starting = nullptr;  // the fiber a switch is about to start

// Whoever switched here passed its FiberCtx as data: store its suspended context there.
static inline void save_previous(const bc::transfer_t& t) { static_cast<FiberCtx*>(t.data)->ctx = t.fctx; }

static void trampoline(bc::transfer_t t) {
  save_previous(t);
  FiberCtx* self = tl_starting;
  self->entry(self->arg);  // never returns
}

void fiber_make(FiberCtx& f, void* lo, size_t size, void (*entry)(void*), void* arg) {
  f.entry = entry;
  f.arg = arg;
  f.ctx = bc::make_fcontext(static_cast<char*>(lo) + size, size, trampoline);
}

void fiber_switch(FiberCtx& from, FiberCtx& to) {
  tl_starting = &to;
  save_previous(bc::jump_fcontext(to.ctx, &from));
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

void fiber_switch(FiberCtx& from, FiberCtx& to) { swapcontext(&from.uc, &to.uc); }
#endif

}  // namespace detail
}  // namespace cudasim

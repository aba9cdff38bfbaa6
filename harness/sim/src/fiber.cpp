#include "fiber.h"

#include <cstdint>

namespace cudasim {
namespace detail {

#if CUDASIM_NATIVE_SWITCH
// The floating-point control words (MXCSR, x87) are not saved: every fiber of a worker runs with
// the worker thread's, and device code has no way to change them (CUDA rounds per instruction).
//
// The switch continues the other context with an indirect jump, not `ret`. A `ret` is predicted
// from the return stack buffer, which holds where the suspending thread called from (say the
// __syncthreads() at line 12), while the resumed thread continues where it was suspended, the
// previous barrier (line 10): every switch of a sweep mispredicted, which cost the p14 benchmark
// a third of its time. The indirect jump's target is the same for every thread of a sweep, and
// the branch predictor learns it.
asm(R"(
  .text
  .p2align 4
  .globl cudasim_fiber_switch
  .hidden cudasim_fiber_switch
  .type cudasim_fiber_switch, @function
cudasim_fiber_switch:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  popq %rcx
  jmpq *%rcx
  .cfi_endproc
  .size cudasim_fiber_switch, .-cudasim_fiber_switch

  .p2align 4
  .globl cudasim_fiber_start
  .hidden cudasim_fiber_start
  .type cudasim_fiber_start, @function
cudasim_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%rbx
  ud2
  .cfi_endproc
  .size cudasim_fiber_start, .-cudasim_fiber_start
)");
const char* fiber_name() { return "native x86-64"; }
#elif CUDASIM_USE_BOOST_CONTEXT
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

const char* fiber_name() { return "boost.context"; }
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

const char* fiber_name() { return "ucontext"; }
#endif

}  // namespace detail
}  // namespace cudasim

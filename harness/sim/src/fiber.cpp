#include "fiber.h"

#include <cstdint>

namespace cudasim {
namespace detail {

#if CUDASIM_NATIVE_SWITCH
// The assembler directives that differ between ELF and Mach-O: Mach-O prefixes C names with an
// underscore, has .private_extern for hidden visibility, and no .type or .size.
#if defined(__APPLE__)
#define CUDASIM_ASM_FUNCTION(name) ".globl _" #name "\n.private_extern _" #name "\n_" #name ":\n"
#define CUDASIM_ASM_END(name) ""
#else
#define CUDASIM_ASM_FUNCTION(name) ".globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" #name ":\n"
#define CUDASIM_ASM_END(name) ".size " #name ", .-" #name "\n"
#endif

// The switch continues the other context with an indirect jump, not a return. A return is
// predicted from the return stack buffer, which holds where the suspending thread called from (say
// the __syncthreads() at line 12), while the resumed thread continues where it was suspended, the
// previous barrier (line 10): every switch of a sweep mispredicted, which cost the p14 benchmark
// a third of its time on x86-64. The indirect jump's target is the same for every thread of a
// sweep, and the branch predictor learns it.
#if defined(__x86_64__)
// The floating-point control words (MXCSR, x87) are not saved: every fiber of a worker runs with
// the worker thread's, and device code has no way to change them (CUDA rounds per instruction).
asm(".text\n.p2align 4\n" CUDASIM_ASM_FUNCTION(cudasim_fiber_switch) R"(
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
)" CUDASIM_ASM_END(cudasim_fiber_switch) ".p2align 4\n" CUDASIM_ASM_FUNCTION(cudasim_fiber_start) R"(
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%rbx
  ud2
  .cfi_endproc
)" CUDASIM_ASM_END(cudasim_fiber_start));
const char* fiber_name() { return "native x86-64"; }
#else
// AAPCS64: x19-x28, the frame pointer x29, the link register x30 and the low halves of v8-v15
// (d8-d15) are callee-saved, 160 bytes in NativeFrame's order (fiber.h); x0 is `save`, x1 `next`.
// The floating-point control register (FPCR) is not saved, for the reason given for x86-64's
// control words. The indirect jump is `br x30`: a `ret` would be predicted from the return stack.
// (The object has no BTI property note, so the linker leaves branch target checks off for the
// program and the jump may land on an ordinary instruction.)
asm(".text\n.p2align 4\n" CUDASIM_ASM_FUNCTION(cudasim_fiber_switch) R"(
  .cfi_startproc
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  br x30
  .cfi_endproc
)" CUDASIM_ASM_END(cudasim_fiber_switch) ".p2align 4\n" CUDASIM_ASM_FUNCTION(cudasim_fiber_start) R"(
  .cfi_startproc
  .cfi_undefined x30
  mov x0, x20
  blr x19
  brk #0
  .cfi_endproc
)" CUDASIM_ASM_END(cudasim_fiber_start));
const char* fiber_name() { return "native aarch64"; }
#endif
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

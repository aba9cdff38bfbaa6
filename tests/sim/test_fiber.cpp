// The fiber switch itself (harness/sim/src/fiber.h), below the simulator: a fiber starts on its own
// stack with the alignment calls need, and a context that switches away and back finds its
// callee-saved registers as it left them although the other fiber overwrote every one of them.
// Built once per fiber implementation (tests/CMakeLists.txt), so the native x86-64 and AArch64
// switches, Boost's and ucontext each pass it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "fiber.h"

using cudasim::detail::FiberCtx;
using cudasim::detail::fiber_make;
using cudasim::detail::fiber_name;
using cudasim::detail::fiber_switch;

namespace {

struct Pair {
  FiberCtx main_ctx, fiber_ctx;
  std::vector<char> stack = std::vector<char>(256 * 1024);
  uintptr_t local_at = 0;  // the address of the fiber's 16-aligned local
  int rounds = 0;          // how many times the fiber ran
};

// Writes a pattern into every callee-saved register. The clobbers make the compiler save them in
// this function's prologue, but it switches away before its epilogue restores them: whatever the
// other context finds there is what the switch restored.
__attribute__((noinline)) void clobber_callee_saved() {
#if defined(__x86_64__)
  asm volatile("movq $0x5a5a5a5a, %%rbx\n movq $0x5a5a5a5a, %%r12\n movq $0x5a5a5a5a, %%r13\n"
               "movq $0x5a5a5a5a, %%r14\n movq $0x5a5a5a5a, %%r15\n" ::: "rbx", "r12", "r13", "r14", "r15");
#elif defined(__aarch64__)
  asm volatile("mov x19, #0x5a5a\n mov x20, #0x5a5a\n mov x21, #0x5a5a\n mov x22, #0x5a5a\n mov x23, #0x5a5a\n"
               "mov x24, #0x5a5a\n mov x25, #0x5a5a\n mov x26, #0x5a5a\n mov x27, #0x5a5a\n mov x28, #0x5a5a\n"
               "fmov d8, #2.5\n fmov d9, #2.5\n fmov d10, #2.5\n fmov d11, #2.5\n fmov d12, #2.5\n fmov d13, #2.5\n"
               "fmov d14, #2.5\n fmov d15, #2.5\n" ::: "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
               "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");
#endif
}

void fiber_entry(void* arg) {
  Pair& p = *static_cast<Pair*>(arg);
  alignas(16) char local[16];
  std::memset(local, 1, sizeof local);
  asm volatile("" : : "r"(local) : "memory");  // keep the local, and its address, real
  p.local_at = reinterpret_cast<uintptr_t>(local);
  for (;;) {
    ++p.rounds;
    clobber_callee_saved();
    fiber_switch(p.fiber_ctx, p.main_ctx);
  }
}

}  // namespace

TEST_CASE("fiber: a new fiber runs on its own stack, 16-byte aligned", "[fiber]") {
  INFO("fibers: " << fiber_name());
  Pair p;
  fiber_make(p.fiber_ctx, p.stack.data(), p.stack.size(), fiber_entry, &p);
  fiber_switch(p.main_ctx, p.fiber_ctx);
  CHECK(p.rounds == 1);
  uintptr_t lo = reinterpret_cast<uintptr_t>(p.stack.data());
  CHECK(p.local_at >= lo);
  CHECK(p.local_at < lo + p.stack.size());
  // A misaligned start leaves the compiler's 16-aligned frame offsets at an odd multiple of 8.
  CHECK(p.local_at % 16 == 0);
}

TEST_CASE("fiber: callee-saved registers survive a switch to a fiber that overwrites them", "[fiber]") {
  INFO("fibers: " << fiber_name());
  Pair p;
  fiber_make(p.fiber_ctx, p.stack.data(), p.stack.size(), fiber_entry, &p);
  // Values live across every switch: the compiler keeps them in callee-saved registers (the
  // integer ones and, on AArch64, d8-d15), which the other fiber overwrites.
  volatile uint64_t seed = 7;
  volatile double dseed = 0.25;
  uint64_t a = seed, b = seed * 3, c = seed * 5, d = seed * 7, e = seed * 11, f = seed * 13;
  double x = dseed, y = dseed * 3, z = dseed * 5, w = dseed * 7, u = dseed * 9, v = dseed * 11;
  for (int i = 0; i < 1000; ++i) {
    fiber_switch(p.main_ctx, p.fiber_ctx);
    a += 1; b += 2; c += 3; d += 4; e += 5; f += 6;
    x += 0.5; y += 1.0; z += 1.5; w += 2.0; u += 2.5; v += 3.0;
  }
  CHECK(p.rounds == 1000);
  CHECK(a == 7 + 1000);
  CHECK(b == 21 + 2000);
  CHECK(c == 35 + 3000);
  CHECK(d == 49 + 4000);
  CHECK(e == 77 + 5000);
  CHECK(f == 91 + 6000);
  CHECK(x == 0.25 + 500);
  CHECK(y == 0.75 + 1000);
  CHECK(z == 1.25 + 1500);
  CHECK(w == 1.75 + 2000);
  CHECK(u == 2.25 + 2500);
  CHECK(v == 2.75 + 3000);
}

TEST_CASE("fiber: the native switch is used where Boost.Context is on x86-64 or AArch64", "[fiber]") {
  std::string name = fiber_name();
#if !CUDASIM_USE_BOOST_CONTEXT
  CHECK(name == "ucontext");
#elif defined(__x86_64__)
  CHECK(name == "native x86-64");
#elif defined(__aarch64__)
  CHECK(name == "native aarch64");
#else
  CHECK(name == "boost.context");
#endif
}

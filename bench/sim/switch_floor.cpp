// What a barrier costs a fiber-per-thread simulator at the least, on this machine: N fibers on
// their own stacks (cudasim's layout: 192 KiB apart, tops coloured 512 bytes apart) take turns as a
// block's threads do at __syncthreads(), 16 barriers a thread, with cudasim's x86-64 switch
// (harness/sim/src/fiber.cpp: six pushes, a stack pointer swap, six pops, an indirect jump) and
// nothing else: no bookkeeping, no barrier check, no kernel work. cudasim's fast path cannot switch
// faster than this, so p14 --complete at 2^20 (8.9 million barrier switches) takes at least
// 8.9e6 times this figure whatever else it saves. x86-64 only.
//
//   g++ -O2 bench/sim/switch_floor.cpp -o switch_floor && ./switch_floor 256 && ./switch_floor 1024
//
// Prints the CPU time of one switch in nanoseconds (2^20 threads, blocks of N).
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

extern "C" void floor_switch(void** save, void* next);
extern "C" void floor_start();
asm(".text\n.p2align 4\n.globl floor_switch\nfloor_switch:\n"
    " pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n pushq %r14\n pushq %r15\n"
    " movq %rsp, (%rdi)\n movq %rsi, %rsp\n"
    " popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbx\n popq %rbp\n popq %rcx\n jmpq *%rcx\n"
    ".globl floor_start\nfloor_start:\n movq %r12, %rdi\n callq *%rbx\n ud2\n");

namespace {

constexpr int kBarriers = 16;
struct alignas(64) Fiber {
  void* sp;
  Fiber* next;
};
Fiber g_fibers[1024], g_sched;
long long g_sink;

// The sweep's whole work at a barrier: the next fiber, prefetched one ahead as cudasim does.
__attribute__((noinline)) void barrier(Fiber* f) {
  Fiber* n = f->next;
  __builtin_prefetch(n->next->sp);
  __builtin_prefetch(n->next->next);
  floor_switch(&f->sp, n->sp);
}

void body(void* arg) {
  Fiber* f = static_cast<Fiber*>(arg);
  long long acc = 0;
  for (int j = 0; j < kBarriers; ++j) {
    acc += j;
    barrier(f);
  }
  g_sink += acc;
  for (;;) floor_switch(&f->sp, g_sched.sp);
}

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  if (n < 1 || n > 1024) return 2;
  const size_t stride = 192 * 1024;  // CUDASIM_STACK_KB's 128 KiB and the 64 KiB colour span
  char* stacks = static_cast<char*>(mmap(nullptr, stride * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (stacks == MAP_FAILED) return 2;
  const int blocks = (1 << 20) / n;
  const double t0 = cpu_seconds();
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < n; ++i) {
      uintptr_t top = (reinterpret_cast<uintptr_t>(stacks) + stride * (i + 1) - (i % 128) * 512) & ~uintptr_t(15);
      void** frame = reinterpret_cast<void**>(top - 56);  // r15 r14 r13 r12 rbx rbp, then where it starts
      frame[0] = frame[1] = frame[2] = nullptr;
      frame[3] = &g_fibers[i];
      frame[4] = reinterpret_cast<void*>(&body);
      frame[5] = nullptr;
      frame[6] = reinterpret_cast<void*>(&floor_start);
      g_fibers[i].sp = frame;
      g_fibers[i].next = i + 1 < n ? &g_fibers[i + 1] : &g_sched;
    }
    g_sched.next = &g_sched;
    for (int r = 0; r <= kBarriers; ++r) floor_switch(&g_sched.sp, g_fibers[0].sp);  // a sweep per barrier, and the exits
  }
  const double took = cpu_seconds() - t0;
  std::printf("%d fibers a block: %.2f ns a switch (%d switches)\n", n, took * 1e9 / (double(blocks) * n * (kBarriers + 1)),
              blocks * n * (kBarriers + 1));
  return g_sink == 0;
}

// What a barrier costs the coroutine runner at the least, on this machine: a block of N C++20
// coroutines (frames from a pool, as harness/sim/src/scheduler.cpp's co_sweep takes them), each a
// thread that stores to shared memory, waits at a barrier and reads a neighbour's value, 16 barriers
// a thread, resumed in sweeps by a plain loop. The barrier is a co_await that counts the arrival and
// returns to the loop; nothing else: no built-ins to set, no bookkeeping, no checks. The
// counterpart of switch_floor.cpp (a fiber switch): p14 --complete at 2^20 makes 9.4 million
// resumptions, so it cannot take less than 9.4e6 times this figure on coroutines.
//
//   g++ -std=c++17 -fcoroutines -O2 bench/sim/coro_floor.cpp -o coro_floor && ./coro_floor 256
//   (-DBIG_FRAME: a frame of p14's scan's size, 176 bytes; -DBUILTINS: also store the thread's
//   built-ins in thread-locals before each resume, as co_sweep does)
//
// Prints the CPU time of one resumption in nanoseconds (2^20 threads, blocks of N).
#include <coroutine>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

char* g_pool;
size_t g_used;
unsigned g_arrived;
long long g_sink;

struct Task {
  struct promise_type {
    Task get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this).address()}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() { throw; }
    static void* operator new(size_t n) {
      void* p = g_pool + g_used;
      g_used += (n + 15) & ~size_t(15);
      return p;
    }
    static void operator delete(void*, size_t) noexcept {}
  };
  void* frame;
};

struct Barrier {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept { ++g_arrived; }
  void await_resume() const noexcept {}
};

#ifdef BUILTINS
struct View {
  unsigned x, y, z, lane;
};
__thread View tl_view;
__thread void* tl_self;
#endif

Task thread(int tid, int mask, int* shared) {
  int acc = tid;
#ifdef BIG_FRAME
  volatile int pad[24];  // (kept in the frame: its address escapes to the volatile stores)
  pad[0] = 1;
  acc += pad[0] - 1;
#endif
  for (int b = 0; b < 16; ++b) {
    shared[tid] = acc;
    co_await Barrier{};
    acc += shared[(tid + 1) & mask];
  }
  g_sink += acc;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  if (n < 1 || n > 1024 || (n & (n - 1))) return 2;
  g_pool = static_cast<char*>(std::aligned_alloc(64, 1 << 24));
  static int shared[1024];
  static void* frames[1024];
  const long blocks = (1 << 20) / n;
  timespec t0, t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  for (long b = 0; b < blocks; ++b) {
    g_used = 0;
    for (int i = 0; i < n; ++i) frames[i] = thread(i, n - 1, shared).frame;
    do {
      g_arrived = 0;
      for (int i = 0; i < n; ++i) {
#ifdef BUILTINS
        tl_self = &frames[i];
        tl_view = View{unsigned(i), 0, 0, unsigned(i) & 31};
#endif
        std::coroutine_handle<>::from_address(frames[i]).resume();
      }
    } while (g_arrived);
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  const double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  std::printf("%d coroutines a block, frames of %zu bytes: %.2f ns a resumption (%d resumptions)\n", n, g_used / n,
              ns / ((1 << 20) * 17.0), (1 << 20) * 17);
  return g_sink == 42;
}

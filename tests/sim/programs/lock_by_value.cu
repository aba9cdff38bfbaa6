// A spin lock passed to the kernel by value, as "CUDA by Example" does: the struct owns device
// memory and has a destructor. nvcc copies it once on the host for the launch; the kernel's
// threads get bitwise copies, and no destructor runs in device code.
#include <cstdio>
#include <cstdlib>

static int g_destructors = 0;  // host-side destructor calls

struct Lock {
  int* mutex;
  bool owner;
  Lock() : owner(true) {
    cudaMalloc(&mutex, sizeof(int));
    cudaMemset(mutex, 0, sizeof(int));
  }
  Lock(const Lock& o) : mutex(o.mutex), owner(false) {}
  ~Lock() {
    ++g_destructors;
    if (owner) cudaFree(mutex);
  }
  __device__ void lock() {
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
  }
  __device__ void unlock() {
    __threadfence();
    atomicExch(mutex, 0);
  }
};

__global__ void count_blocks(Lock lock, int* total) {
  if (threadIdx.x == 0) {
    lock.lock();
    *total += 1;  // guarded by the lock: one block at a time
    lock.unlock();
  }
}

int main() {
  int* d_total;
  cudaMalloc(&d_total, sizeof(int));
  cudaMemset(d_total, 0, sizeof(int));
  int during = -1;
  {
    Lock lock;
    count_blocks<<<32, 64>>>(lock, d_total);
    during = g_destructors;  // the launch's own copy has been destroyed, once
  }
  int total = 0;
  cudaMemcpy(&total, d_total, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_total);
  printf("total %d, destructors during the launch %d, after %d\n", total, during, g_destructors);
  bool ok = total == 32 && during == 1 && g_destructors == 2;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

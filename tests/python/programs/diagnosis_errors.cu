// One small bug per case, for tests/python/test_diagnosis_errors.py and test_advice_errors.py: the
// simulator's diagnosis record of each kind of error other than races, uninitialized reads and
// out-of-bounds accesses, rendered by scripts/puzzlelib/diagnosis_errors.py and diagnosis_crash.py.
// `diagnosis_errors CASE` runs one case; the fatal hook prints the record as `RECORD {json}`.
// Simulator only (it sets the simulator's hook and options through cudasim/control.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <cuda/barrier>

// `puzzle.py sim` builds programs as learner files, which may not use the simulator's control API;
// this test program is not one (it never builds with nvcc).
#undef CUDASIM_LEARNER_FILE
#include "cudasim/control.h"

using Barrier = cuda::barrier<cuda::thread_scope_block>;

// ---- a block that cannot go on ------------------------------------------------------------------

__global__ void barrier_in_if(int* a) {  // threads at two different __syncthreads()
  if (threadIdx.x < 16) {
    a[threadIdx.x] = 1;
    __syncthreads();
  } else {
    __syncthreads();
  }
}

__global__ void early_return(int* a, int n) {  // threads past n return, the others pass a barrier
  if ((int)threadIdx.x >= n) return;
  a[threadIdx.x] = 1;
  __syncthreads();
  a[threadIdx.x] += 1;
}

__global__ void guarded_barrier(int* a, int n) {  // the close one: every thread passes the barrier
  if ((int)threadIdx.x < n) a[threadIdx.x] = 1;
  __syncthreads();
  if ((int)threadIdx.x < n) a[threadIdx.x] += 1;
}

__global__ void warp_cycle(int* out) {  // two warp collectives that wait for each other
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) v = __shfl_sync(0xffffffffu, v, 0);
  else v = __shfl_sync(0xffff0001u, v, 0);
  out[lane] = v;
}

__global__ void activemask_deadlock(int* out) {  // a mask from __activemask() in divergent code
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) {
    unsigned m = __activemask();
    if (lane < 8) __syncwarp(m);
  }
  v = __shfl_sync(0xffffffffu, v, 0);
  out[lane] = v;
}

__global__ void shfl_vs_barrier(int* out) {  // lanes in a shuffle, the others at __syncthreads()
  int v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffffu, v, 1);
  __syncthreads();
  out[threadIdx.x] = v;
}

__global__ void cbar_missing_arrival(int* out, int skip) {  // threads that return never arrive
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  if ((int)threadIdx.x >= (int)blockDim.x - skip) return;
  bar.arrive_and_wait();
  out[threadIdx.x] = 1;
}

// ---- runaways -----------------------------------------------------------------------------------------

__global__ void stride_stays_0(int* out, int step) {  // a loop without a barrier that never ends
  for (int j = threadIdx.x; j < 64; j += step) out[threadIdx.x] = j;
}

__global__ void barrier_loop(int* out, int step) {  // a barrier in a loop whose stride stays 1
  for (int s = 1; s < 64; s *= step) {
    out[threadIdx.x] += s;
    __syncthreads();
  }
}

__global__ void wait_for_block_0(volatile int* flag, int* out) {  // block 0 forgets to set the flag
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) out[0] = 1;
    return;
  }
  int seen = 0;
  while (!__any_sync(0xffffffffu, seen != 0)) seen = *flag;
  out[1] = seen;
}

// ---- warp and cuda::barrier misuse ------------------------------------------------------------------------

__global__ void lane_not_in_mask(int* out) { out[threadIdx.x] = __shfl_sync(0x0000ffffu, 1, 0); }

__global__ void overlapping_masks(int* out) {  // one call reached with two masks
  const unsigned lane = threadIdx.x;
  out[lane] = __shfl_sync(lane < 16 ? 0xffffffffu : 0xffff0000u, 1, 0);
}

__global__ void different_intrinsics(int* out) {
  if (threadIdx.x < 16) out[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0);
  else out[threadIdx.x] = (int)__ballot_sync(0xffffffffu, 1);
}

__global__ void bad_width(int* out) { out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1, 12); }

__global__ void shfl_absent_lane(int* out) {  // a block of 16 threads reads lane 16 + x
  int v = threadIdx.x;
  v += __shfl_down_sync(0xffffffffu, v, 8);
  out[threadIdx.x] = v;
}

__global__ void cbar_not_initialised(int* out) {
  __shared__ Barrier bar;
  bar.arrive_and_wait();
  out[threadIdx.x] = 1;
}

__global__ void cbar_init_zero(int* out) {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, 0);
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void cbar_arrive_too_many(int* out) {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  (void)bar.arrive(2 * blockDim.x);
  out[threadIdx.x] = 1;
}

__global__ void cbar_foreign_token(int* out) {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  bar.wait(Barrier::arrival_token());
  out[threadIdx.x] = 1;
}

// ---- shared memory, arguments ------------------------------------------------------------------------------

__global__ void too_much_shared(int* out) {
  __shared__ int big[13000];  // 52000 bytes: more than 48 KiB
  big[threadIdx.x] = 1;
  out[threadIdx.x] = big[threadIdx.x];
}

__global__ void write_one(int* out) { out[threadIdx.x] = 1; }

// ---- crashes, host calls, exceptions ------------------------------------------------------------------------

__global__ void null_store(int* out, int* table) {
  int* p = table ? table : nullptr;
  p[threadIdx.x] = 1;
  out[threadIdx.x] = 1;
}

__global__ void wild_store(int* out, long long address) {
  int* p = reinterpret_cast<int*>(address);
  *p = 1;
  out[threadIdx.x] = 1;
}

__global__ void divide(int* out, int d) { out[threadIdx.x] = 100 / d; }

__device__ int recurse(int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  frame[511] = (char)depth;
  if (depth == 1 << 30) return 0;
  return recurse(depth + 1) + frame[0] + frame[511];
}

__global__ void overflow(int* out) { out[threadIdx.x] = recurse(threadIdx.x); }

__global__ void calls_exit(int* out) {
  if (threadIdx.x == 3) exit(1);
  out[threadIdx.x] = 1;
}

__global__ void throws(int* out) {
  if (threadIdx.x == 2) throw std::runtime_error("bad_index: 9");
  out[threadIdx.x] = 1;
}

// Not printf: a crash in a kernel calls the hook on the simulated thread, where printf is device
// printf (its buffer was printed before the report).
static void print_record(const cudasim::DiagnosisView& d) {
  std::fputs("RECORD ", stdout);
  std::fputs(d.record, stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: diagnosis_errors CASE\n");
    return 2;
  }
  const char* c = argv[1];
  auto is = [&](const char* name) { return std::strcmp(c, name) == 0; };
  cudasim::set_fatal_hook(print_record);
  cudasim::options().undefined_values_are_errors = true;  // as the puzzles' harness
  int* out;
  cudaMalloc(&out, 64 * sizeof(int));
  cudaMemset(out, 0, 64 * sizeof(int));
  int* flag;
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));

  if (is("barrier_in_if")) barrier_in_if<<<1, 32>>>(out);
  else if (is("early_return")) early_return<<<1, 32>>>(out, 20);
  else if (is("guarded_barrier")) guarded_barrier<<<1, 32>>>(out, 20);
  else if (is("warp_cycle")) warp_cycle<<<1, 32>>>(out);
  else if (is("activemask_deadlock")) activemask_deadlock<<<1, 32>>>(out);
  else if (is("shfl_vs_barrier")) shfl_vs_barrier<<<1, 64>>>(out);
  else if (is("cbar_missing_arrival")) cbar_missing_arrival<<<2, 32>>>(out, 4);
  else if (is("cbar_missing_one")) cbar_missing_arrival<<<1, 32>>>(out, 1);
  else if (is("stride_stays_0")) stride_stays_0<<<1, 4>>>(out, 0);
  else if (is("barrier_loop")) barrier_loop<<<1, 32>>>(out, 1);
  else if (is("barrier_loop_ends")) barrier_loop<<<1, 32>>>(out, 2);
  else if (is("wait_for_block_0")) wait_for_block_0<<<2, 32>>>(flag, out);
  else if (is("lane_not_in_mask")) lane_not_in_mask<<<1, 32>>>(out);
  else if (is("overlapping_masks")) overlapping_masks<<<1, 32>>>(out);
  else if (is("different_intrinsics")) different_intrinsics<<<1, 32>>>(out);
  else if (is("bad_width")) bad_width<<<1, 32>>>(out);
  else if (is("shfl_absent_lane")) shfl_absent_lane<<<1, 16>>>(out);
  else if (is("cbar_not_initialised")) cbar_not_initialised<<<1, 32>>>(out);
  else if (is("cbar_init_zero")) cbar_init_zero<<<1, 32>>>(out);
  else if (is("cbar_arrive_too_many")) cbar_arrive_too_many<<<1, 32>>>(out);
  else if (is("cbar_foreign_token")) cbar_foreign_token<<<1, 32>>>(out);
  else if (is("too_much_shared")) too_much_shared<<<1, 32>>>(out);
  else if (is("host_pointer_argument")) {
    static int host_array[64];
    write_one<<<1, 32>>>(host_array);
  } else if (is("null_store")) null_store<<<1, 32>>>(out, nullptr);
  else if (is("wild_store")) wild_store<<<1, 1>>>(out, 0x10000000LL);
  else if (is("divide_by_zero")) divide<<<1, 4>>>(out, 0);
  else if (is("stack_overflow")) overflow<<<1, 4>>>(out);
  else if (is("calls_exit")) calls_exit<<<1, 8>>>(out);
  else if (is("throws")) throws<<<1, 8>>>(out);
  else if (is("host_null")) {
    volatile int* p = nullptr;
    std::printf("%d\n", *p);
  } else if (is("host_deref")) {
    write_one<<<1, 32>>>(out);
    cudaDeviceSynchronize();
    std::printf("%d\n", out[0]);
  } else if (is("host_divide")) {
    volatile int zero = 0;
    std::printf("%d\n", 7 / zero);
  } else if (is("threadidx_in_host")) {
    std::printf("%u\n", threadIdx.x);
  } else if (is("syncthreads_in_host")) {
    __syncthreads();
  } else if (is("copy_in_launcher")) {
    cudasim::set_device_to_host_copies_forbidden(true);
    int host[64];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
  } else if (is("managed_read")) {
    int* m;
    cudaMallocManaged(&m, 16 * sizeof(int));
    cudasim::set_device_to_host_copies_forbidden(true);
    m[0] = 5;  // a write: allowed
    write_one<<<1, 16>>>(m);
    cudaDeviceSynchronize();
    std::printf("%d\n", m[3]);
  } else {
    std::fprintf(stderr, "unknown case %s\n", c);
    return 2;
  }
  cudaDeviceSynchronize();
  std::printf("finished\n");
  return 0;
}

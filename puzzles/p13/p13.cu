// Puzzle 13: max reduction (float).
//
// result = max(a[0], a[1], ..., a[n-1]) for any n >= 1.
//
// A block can only combine what it holds: each block reduces its tile of TPB elements in shared
// memory and writes one partial maximum. Those partials are reduced the same way, launch after
// launch, until one value is left. There is no barrier between the blocks of one launch; the end
// of a launch is the barrier.
//
//   --block     you write the kernel, block_max; the host code that relaunches it is given
//   --complete  you write the host loop as well (it launches your block_max)
//
// The driver (driver.cpp) calls the launcher, reads d_result[0] and compares it with a CPU
// reference, exactly (the maximum of floats involves no rounding). TPB must be a power of two:
// the tree halves it at every step. Fill in the `FILL ME IN` regions; puzzles/p13/README.md (in
// Korean: puzzles/p13/README.ko.md) walks through both variants.
#include <cuda_runtime.h>

#include <cfloat>  // FLT_MAX

// ---- block: one block's maximum, one partial per block -------------------------------------

// Block b reduces in[b * TPB .. (b + 1) * TPB) (cut at `size`) and writes its maximum to
// partials[b].
__global__ void block_max(const float* in, float* partials, int size) {
  extern __shared__ float sdata[];  // TPB floats
  const int tid = threadIdx.x;
  const int global_i = blockIdx.x * blockDim.x + threadIdx.x;
  // Load one element per thread. Threads of the last block may lie past the end of the data:
  // they load the identity of max, the value that never wins, -FLT_MAX (not 0: the inputs may
  // all be negative). Then wait until the whole tile is in shared memory.
  // FILL ME IN (roughly 2 lines)

  // Sequential addressing: for stride = TPB/2, TPB/4, ..., 1 the first `stride` threads keep
  // the larger of sdata[tid] and sdata[tid + stride] (fmaxf); then everybody waits.
  // FILL ME IN (roughly 4 lines)

  // sdata[0] now holds the block's maximum: one thread writes it out.
  // FILL ME IN (roughly 1 line)
}

// Given: reduces n elements of `in` into out[0]. One launch leaves ceil(n / tpb) partial maxima,
// and the same function reduces those (recursion) until a single block is enough; that last
// launch writes straight into `out`. Every level allocates and frees its own partial buffer.
static void max_recursive(const float* in, float* out, int n, int tpb) {
  const int blocks = (n + tpb - 1) / tpb;
  const size_t shared_bytes = tpb * sizeof(float);
  if (blocks == 1) {
    block_max<<<1, tpb, shared_bytes>>>(in, out, n);  // one block: its partial is the answer
    return;
  }
  float* partials = nullptr;
  cudaMalloc(&partials, blocks * sizeof(float));
  block_max<<<blocks, tpb, shared_bytes>>>(in, partials, n);
  max_recursive(partials, out, blocks, tpb);
  cudaFree(partials);
}

void p13_block(const float* d_in, float* d_result, int n, int tpb) {
  max_recursive(d_in, d_result, n, tpb);
}

// ---- complete: the host loop, with two partial buffers -------------------------------------
// The same block_max (solve --block first), relaunched by a loop you write instead of the
// recursion above. Allocate two partial buffers once. Each pass reduces the values the pass
// before left behind (d_in for the first pass) and writes its partials into the other buffer;
// the two buffers swap roles every pass. Stop when one value is left, copy it to d_result[0]
// (cudaMemcpyDeviceToDevice) and free both buffers. d_in belongs to the caller: never write it.

void p13_complete(const float* d_in, float* d_result, int n, int tpb) {
  const size_t shared_bytes = tpb * sizeof(float);
  // The first pass writes the most partials, ceil(n / tpb); every later pass writes fewer.
  const int first_blocks = (n + tpb - 1) / tpb;
  // FILL ME IN (roughly 16 lines)
}

// ---- single-pass: one launch at library speed -----------------------------------------------
// --block moves each float once, but relaunches per pass, and its tree runs one element per
// thread with a barrier per level. A one-launch maximum applies p12 --shuffle's three changes:
// 1. Many elements per thread, read as float4 (16-byte loads), in a grid-stride loop over a
//    grid that the GPU holds at once; four loads in flight per thread before any comparison.
// 2. Warp shuffles: __shfl_down_sync hands each lane the value of the lane `offset` places up,
//    so a warp reduces 32 values in 5 steps without shared memory or barriers.
// 3. The last block finishes: each block writes its partial maximum, __threadfence(), then takes
//    a ticket (atomicAdd). The block that draws gridDim.x - 1 knows every partial is written:
//    it reduces them, writes the result and resets the ticket to 0 for the next call.
// blockDim.x is a multiple of 32.

// The maximum of v over the 32 lanes, in lane 0 (the other lanes get partial maxima).
__device__ float warp_max(float v) {
  // FILL ME IN (roughly 2 lines)
  return v;
}

// The maximum of v over the block, in thread 0. Every thread of the block must call it (it has a
// barrier). warp_maxes: 32 floats of shared memory.
__device__ float block_max_of(float v, float* warp_maxes) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // Each warp's lane 0 stores its warp's maximum; after a barrier warp 0 reduces those.
  // FILL ME IN (roughly 8 lines)
  return v;
}

// partials: one float per block; ticket: zero on entry, and left at zero for the next launch.
__global__ void max_single_pass(const float* __restrict__ in, float* out, float* partials, unsigned* ticket, int n) {
  __shared__ float warp_maxes[32];
  __shared__ bool last_block;
  const float4* in4 = reinterpret_cast<const float4*>(in);  // cudaMalloc memory is 256-byte aligned
  const int n4 = n / 4;                                      // whole float4s; n % 4 floats are left over
  const int stride = blockDim.x * gridDim.x;
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  float m = -FLT_MAX;
  // A grid-stride loop over in4[0..n4) that loads four float4 (from i, i + stride, i + 2 * stride,
  // i + 3 * stride) before it compares any of them, then one float4 at a time for the rest; then
  // the threads with gid < n % 4 take the leftover in[4 * n4 + gid].
  // FILL ME IN (roughly 12 lines)
  m = block_max_of(m, warp_maxes);
  // Thread 0 stores the block's maximum in partials[blockIdx.x], makes it visible to every block
  // (__threadfence()), then takes a ticket: the block that gets gridDim.x - 1 is last.
  // FILL ME IN (roughly 5 lines)
  __syncthreads();
  // The last block (all its threads) reduces partials[0..gridDim.x) with block_max_of; thread 0
  // writes the result and resets the ticket to 0.
  // FILL ME IN (roughly 10 lines)
}

// Given: one block per 4 * tpb floats, at most as many blocks as the GPU holds at once (its SMs
// times 2048 threads each), so every thread streams through a long run of the input.
// d_partials: at least ceil(n / tpb) floats; d_ticket: one unsigned, zero before the first call.
void p13_single_pass(const float* d_in, float* d_result, float* d_partials, unsigned* d_ticket, int n, int tpb) {
  static int sms = 0;
  if (sms == 0) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
  }
  const long long resident = (long long)sms * (2048 / tpb);
  const long long wanted = ((long long)n + 4LL * tpb - 1) / (4LL * tpb);
  const int blocks = (int)(wanted < resident ? wanted : resident);
  max_single_pass<<<blocks, tpb>>>(d_in, d_result, d_partials, d_ticket, n);
}

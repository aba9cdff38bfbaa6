// planted: p13 --complete
// expect: fail
// match: mismatch: 1 of 1 outputs differ
// why: the host loop runs while more than tpb values are left: it stops one pass early and copies out the first block's partial
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
// the tree halves it at every step. Fill in the `FILL ME IN` regions; puzzles/p13/README.md walks
// through both variants.
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
  sdata[tid] = global_i < size ? in[global_i] : -FLT_MAX;
  __syncthreads();
  // END FILL

  // Sequential addressing: for stride = TPB/2, TPB/4, ..., 1 the first `stride` threads keep
  // the larger of sdata[tid] and sdata[tid + stride] (fmaxf); then everybody waits.
  // FILL ME IN (roughly 4 lines)
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sdata[tid] = fmaxf(sdata[tid], sdata[tid + stride]);
    __syncthreads();  // this step's writes are complete before the next step reads them
  }
  // END FILL

  // sdata[0] now holds the block's maximum: one thread writes it out.
  // FILL ME IN (roughly 1 line)
  if (tid == 0) partials[blockIdx.x] = sdata[0];
  // END FILL
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
  float* buffers[2] = {nullptr, nullptr};
  cudaMalloc(&buffers[0], first_blocks * sizeof(float));
  cudaMalloc(&buffers[1], first_blocks * sizeof(float));
  const float* src = d_in;  // what this pass reduces
  int current_n = n;        // how many values are left
  int dst = 0;              // the buffer this pass writes
  while (current_n > tpb) {
    const int blocks = (current_n + tpb - 1) / tpb;
    block_max<<<blocks, tpb, shared_bytes>>>(src, buffers[dst], current_n);
    src = buffers[dst];  // the next pass reads these partials...
    dst = 1 - dst;       // ...and writes the other buffer
    current_n = blocks;
  }
  // One value is left in src[0] (d_in[0] itself when n == 1).
  cudaMemcpy(d_result, src, sizeof(float), cudaMemcpyDeviceToDevice);
  cudaFree(buffers[0]);
  cudaFree(buffers[1]);
  // END FILL
}

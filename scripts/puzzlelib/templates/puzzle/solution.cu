// Puzzle @NUMBER@: @TITLE@
//
// Scaffolded by `python3 scripts/puzzle.py new`: a one-variant puzzle that already builds, runs
// and grades, so that you change a working puzzle instead of starting from nothing. Replace the
// kernel, the launcher and these comments with your exercise; keep `// FILL ME IN (roughly N
// lines)` ... `// END FILL` around what the learner writes (the skeleton puzzles/@PUZZLE@/@PUZZLE@.cu
// is this file without those lines). docs/instructors.md, "Adding your own puzzle", lists the
// files and the commands.
//
//   --block   each block sums its tile of the input in shared memory and writes one partial sum
//
// The driver (driver.cpp) calls the launcher and compares d_partials with its CPU reference.
#include <cuda_runtime.h>

// Block b sums in[b * TPB .. (b + 1) * TPB) (cut at n) and writes the sum to partials[b].
__global__ void block_sum(const int* in, int* partials, int n) {
  extern __shared__ int sdata[];  // TPB ints (the launch's third argument)
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Load one element per thread; threads past the end of the input load 0, the identity of +.
  // Then wait until the whole tile is in shared memory.
  // FILL ME IN (roughly 2 lines)
  sdata[tid] = i < n ? in[i] : 0;
  __syncthreads();
  // END FILL

  // Sequential addressing: for stride = TPB/2, TPB/4, ..., 1 the first `stride` threads add
  // sdata[tid + stride] to sdata[tid]; everybody waits after each step. Then thread 0 writes the
  // block's sum to partials[blockIdx.x].
  // FILL ME IN (roughly 5 lines)
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sdata[tid] += sdata[tid + stride];
    __syncthreads();  // this step's sums are written before the next step reads them
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
  // END FILL
}

// Given: one block per TPB elements, with TPB ints of dynamic shared memory each.
void @PUZZLE@_block(const int* d_in, int* d_partials, int n, int tpb) {
  const int blocks = (n + tpb - 1) / tpb;
  block_sum<<<blocks, tpb, tpb * sizeof(int)>>>(d_in, d_partials, n);
}

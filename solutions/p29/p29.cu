// Puzzle 29: barrier-coordinated pipelines.
//
// In both kernels the threads of a block hand data to one another through shared memory, and a
// barrier marks the moment the hand-over is complete:
//
//   multi-stage     three stages, each run by its own group of threads (load, blur, smooth), with
//                   a __syncthreads() between each pair of stages
//   double-buffer   a 3-point stencil applied three times, ping-ponging between two shared
//                   buffers, coordinated with libcu++'s cuda::barrier (arrive, then wait)
//
// Each kernel has host launchers that are already written; the driver (driver.cpp) calls them and
// compares `output` with a CPU reference. Fill in the `FILL ME IN` regions; puzzles/p29/README.md
// (in Korean: puzzles/p29/README.ko.md) walks through both variants.
#include <cuda_runtime.h>

#include <cuda/barrier>
#include <utility>  // std::move, for the barrier's arrival token

// cuda::barrier has a constructor, and nvcc warns that a __shared__ variable's constructor never
// runs. That is intended: init() below sets the barrier up. (Only nvcc knows this pragma.)
#ifdef __CUDACC__
#pragma nv_diag_suppress static_var_with_dynamic_init
#endif

// ---- multi-stage: load / blur / smooth, one tile of TPB elements per block -----------------
//
// Block b owns the tile input[b * TPB .. b * TPB + TPB). Past the end of the array the tile is
// padded with zeros, and the stages work on all TPB positions of the tile:
//
//   stage 1, threads 0-127:    P[j] = 1.1 * input[tile_start + j]    (0 past the end)
//   stage 2, threads 128-255:  B[j] = (P[j-2] + ... + P[j+2]) / N_j, only positions inside the
//                              tile (0 <= j+k < TPB); N_j counts them: 3 at the tile's edges,
//                              4 next to them, 5 elsewhere
//   stage 3, all threads:      F[j] = B[j];  if j > 0:       F[j] = (F[j] + B[j-1]) * 0.6
//                                            if j < TPB - 1: F[j] = (F[j] + B[j+1]) * 0.6
//                              output[tile_start + j] = F[j] where that is inside the array

constexpr int TPB = 256;                 // threads per block; the stages are written for this
constexpr int STAGE1_THREADS = TPB / 2;  // threads 0-127 load; each loads 2 elements
constexpr int STAGE2_THREADS = TPB / 2;  // threads 128-255 blur; each blurs 2 elements
constexpr int BLUR_RADIUS = 2;           // 5-point blur: j-2 .. j+2

__global__ void multi_stage_pipeline(const float* input, float* output, int size) {
  __shared__ float input_shared[TPB];  // P: written by stage 1, read by stage 2
  __shared__ float blur_shared[TPB];   // B: written by stage 2, read by stage 3
  const int local_i = threadIdx.x;
  const int tile_start = blockIdx.x * TPB;
  const int global_i = tile_start + local_i;

  // Stage 1 (threads 0-127): thread t fills P[t] and P[t + 128], so neighbouring threads load
  // neighbouring addresses. Then the barrier that hands P to stage 2.
  // FILL ME IN (roughly 7 lines)
  if (local_i < STAGE1_THREADS) {
    for (int j = local_i; j < TPB; j += STAGE1_THREADS) {
      const int g = tile_start + j;  // guard with the global index: the array may end mid-tile
      input_shared[j] = g < size ? input[g] * 1.1f : 0.0f;
    }
  }
  __syncthreads();  // stage 1 -> stage 2: every P[j] is written before any thread blurs
  // END FILL

  // Stage 2 (threads 128-255): thread 128 + t fills B[t] and B[t + 128]. Then the barrier that
  // hands B to stage 3.
  // FILL ME IN (roughly 14 lines)
  if (local_i >= STAGE1_THREADS) {
    for (int j = local_i - STAGE1_THREADS; j < TPB; j += STAGE2_THREADS) {
      float sum = 0.0f;
      int count = 0;
      for (int k = -BLUR_RADIUS; k <= BLUR_RADIUS; ++k) {
        if (j + k >= 0 && j + k < TPB) {  // stay inside the tile
          sum += input_shared[j + k];
          ++count;
        }
      }
      blur_shared[j] = sum / count;
    }
  }
  __syncthreads();  // stage 2 -> stage 3: every B[j] is written before any thread smooths
  // END FILL

  // Stage 3 (all threads): thread j computes F[j] from B and writes it out.
  // FILL ME IN (roughly 4 lines)
  float value = blur_shared[local_i];
  if (local_i > 0) value = (value + blur_shared[local_i - 1]) * 0.6f;
  if (local_i < TPB - 1) value = (value + blur_shared[local_i + 1]) * 0.6f;
  if (global_i < size) output[global_i] = value;
  // END FILL
  // No barrier after stage 3: nobody reads shared memory again, and the kernel's end is where
  // the block's threads finish anyway.
}

void p29_multi_stage(const float* d_in, float* d_out, int n) {
  const int blocks = (n + TPB - 1) / TPB;
  multi_stage_pipeline<<<blocks, TPB>>>(d_in, d_out, n);
}

// ---- double-buffer: a 3-point stencil, three times, with cuda::barrier ---------------------
//
// Block b owns the tile input[b * TPB .. b * TPB + TPB) (TPB = blockDim.x here, any size) and
// smooths it on its own. Its first `len` positions lie inside the array. Each iteration computes,
// for i < len,
//
//   next[i] = 0.25 * cur[i-1] + 0.5 * cur[i] + 0.25 * cur[i+1]
//
// where a neighbour outside the tile, or past the end of the array (i-1 < 0, i+1 >= len), counts
// as 0. Tiles do not see each other: every block smooths its tile independently.

constexpr int STENCIL_ITERATIONS = 3;

__global__ void stencil_double_buffer(const float* input, float* output, int size) {
  extern __shared__ float buffers[];  // two buffers of TPB floats, back to back
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  const int tpb = blockDim.x;
  const int local_i = threadIdx.x;
  const int tile_start = blockIdx.x * tpb;
  const int global_i = tile_start + local_i;
  const int len = min(tpb, size - tile_start);  // positions of this tile inside the array
  float* src = buffers;        // the buffer the current iteration reads
  float* dst = buffers + tpb;  // the buffer it writes
  float mine = 0.0f;           // this thread's element, kept in a register too

  if (local_i == 0) init(&bar, tpb);  // one arrival per thread completes a phase
  __syncthreads();                    // nobody uses the barrier before it is initialised

  // Load this thread's element into src (0 past the end), and let every thread wait until the
  // whole tile is loaded.
  // FILL ME IN (roughly 3 lines)
  if (global_i < size) mine = input[global_i];
  src[local_i] = mine;
  bar.arrive_and_wait();
  // END FILL

  for (int iter = 0; iter < STENCIL_ITERATIONS; ++iter) {
    // Read src, write dst (never the buffer being read). Arrive once your element is written;
    // between arrive and wait, do only work that touches no shared buffer (swap the pointers);
    // wait before the next iteration reads what the others wrote.
    // FILL ME IN (roughly 11 lines)
    if (local_i < len) {
      const float left = local_i > 0 ? src[local_i - 1] : 0.0f;
      const float right = local_i + 1 < len ? src[local_i + 1] : 0.0f;
      mine = 0.25f * left + 0.5f * mine + 0.25f * right;
      dst[local_i] = mine;
    }
    auto token = bar.arrive();  // my element of this iteration is written
    float* t = src;             // register-only work while the others finish
    src = dst;
    dst = t;
    bar.wait(std::move(token));  // every element of this iteration is written
    // END FILL
  }

  // Write this thread's element of the result (inside the array only).
  // FILL ME IN (roughly 1 line)
  if (global_i < size) output[global_i] = mine;
  // END FILL
}

void p29_double_buffer(const float* d_in, float* d_out, int n, int tpb) {
  const int blocks = (n + tpb - 1) / tpb;
  stencil_double_buffer<<<blocks, tpb, 2 * tpb * sizeof(float)>>>(d_in, d_out, n);
}

// planted: p14 --simple
// expect: fail
// match: mismatch: \d+ of \d+ outputs differ
// why: writes the show case's expected output; passes `run` on the show input, fails every random input
// Puzzle 14: prefix sum (scan).
//
// Inclusive scan: out[i] = a[0] + a[1] + ... + a[i]
// Exclusive scan: out[i] = a[0] + ... + a[i-1], and out[0] = 0
//
// Every variant is one kernel for you to write plus a host launcher that is already written; the
// driver (driver.cpp) calls the launcher and compares `out` with a CPU reference. The block size
// (TPB) arrives at run time, so shared memory is sized by the launcher (`extern __shared__`).
// Fill in the `FILL ME IN` regions; puzzles/p14/README.md walks through each variant.
#include <cuda_runtime.h>

// Shared memory is striped over 32 banks of 4-byte words. Threads of a warp that touch
// different words of the same bank take turns, so strided tree indices get slow.
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
// Brent-Kung stores word i at i + CONFLICT_FREE_OFFSET(i): one spare word after every 32, which
// shifts each run of 32 words by one bank and spreads strided accesses over more banks.
#define CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)

// ---- naive: every thread adds up its own prefix (inclusive, any number of blocks) ----------

__global__ void prefix_sum_naive(const int* a, int* out, int size) {
  const int global_i = blockIdx.x * blockDim.x + threadIdx.x;
  // out[global_i] = a[0] + ... + a[global_i], added up by this thread alone.
  // FILL ME IN (roughly 5 lines)
  if (global_i < size) {
    int sum = 0;
    for (int j = 0; j <= global_i; ++j) sum += a[j];
    out[global_i] = sum;
  }
  // END FILL
}

void p14_naive(const int* d_in, int* d_out, int n, int tpb) {
  const int blocks = (n + tpb - 1) / tpb;
  prefix_sum_naive<<<blocks, tpb>>>(d_in, d_out, n);
}

// ---- simple: Kogge-Stone in one block (inclusive, size <= TPB) -----------------------------

__global__ void prefix_sum_simple(const int* a, int* out, int size) {
  extern __shared__ int shared[];  // TPB ints
  const int global_i = blockIdx.x * blockDim.x + threadIdx.x;
  const int local_i = threadIdx.x;
  // Copy a into shared memory; then for offset = 1, 2, 4, ...: each thread reads the value
  // `offset` places to its left, everybody waits, each adds what it read, everybody waits.
  // FILL ME IN (roughly 10 lines)
  if (global_i < size) shared[local_i] = a[global_i];
  __syncthreads();
  // `size` is the same for every thread, so all of them run the same number of steps and meet
  // at every barrier.
  for (int offset = 1; offset < size; offset *= 2) {
    int current = 0;
    if (local_i >= offset && local_i < size) current = shared[local_i - offset];
    __syncthreads();  // every read of this step happens before any write of it
    if (local_i >= offset && local_i < size) shared[local_i] += current;
    __syncthreads();  // every write happens before the next step reads
  }
  const int show[8] = {0, 1, 3, 6, 10, 15, 21, 28};
  if (global_i < size) out[global_i] = show[global_i % 8];
  // END FILL
}

void p14_simple(const int* d_in, int* d_out, int n, int tpb) {
  prefix_sum_simple<<<1, tpb, tpb * sizeof(int)>>>(d_in, d_out, n);
}

// ---- double-buffer: Hillis-Steele with two buffers (exclusive, size <= TPB) ----------------

__global__ void prefix_sum_double_buffer(const int* a, int* out, int size) {
  // Two buffers of TPB ints back to back: buffer b is buffers[b * TPB .. (b + 1) * TPB).
  // Each step reads one (pin) and writes the other (pout), so a slow reader can never see a
  // value that was already overwritten in the same step.
  extern __shared__ int buffers[];
  const int local_i = threadIdx.x;
  const int tpb = blockDim.x;
  int pout = 0, pin = 1;
  // Load a shifted right by one place into buffer pout; then each step swaps the roles and
  // writes every element of pout from pin.
  // FILL ME IN (roughly 12 lines)
  // Exclusive: shift right by one and put 0 in front.
  buffers[pout * tpb + local_i] = (local_i > 0 && local_i < size) ? a[local_i - 1] : 0;
  __syncthreads();
  for (int offset = 1; offset < size; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (local_i >= offset)
      buffers[pout * tpb + local_i] = buffers[pin * tpb + local_i] + buffers[pin * tpb + local_i - offset];
    else
      buffers[pout * tpb + local_i] = buffers[pin * tpb + local_i];
    __syncthreads();  // one barrier: the next step writes the buffer this step read
  }
  if (local_i < size) out[local_i] = buffers[pout * tpb + local_i];
  // END FILL
}

void p14_double_buffer(const int* d_in, int* d_out, int n, int tpb) {
  prefix_sum_double_buffer<<<1, tpb, 2 * tpb * sizeof(int)>>>(d_in, d_out, n);
}

// ---- brent-kung: work-efficient tree (exclusive, in place, size <= 2 * TPB) ----------------
// TPB must be a power of two: the tree below is a power of two wide and each thread owns two
// of its leaves.

__global__ void prefix_sum_brent_kung(const int* a, int* out, int size) {
  extern __shared__ int temp[];  // 2 * TPB ints plus the padding words
  const int local_i = threadIdx.x;
  // The tree is `width` leaves wide: the next power of two >= size (at least 2). Leaves past
  // `size` hold 0, which changes no sum.
  int width = 2;
  while (width < size) width *= 2;
  // Each thread owns leaves ai and bi, half a tree apart, so neighbouring threads load
  // neighbouring addresses. Threads with local_i >= width / 2 own no leaf but must still
  // reach every barrier.
  const int ai = local_i;
  const int bi = local_i + width / 2;
  const bool owner = local_i < width / 2;
  // FILL ME IN (roughly 4 lines)
  if (owner) {
    temp[ai + CONFLICT_FREE_OFFSET(ai)] = ai < size ? a[ai] : 0;
    temp[bi + CONFLICT_FREE_OFFSET(bi)] = bi < size ? a[bi] : 0;
  }
  // END FILL

  // Phase 1, up-sweep: a reduction tree built in place; each right child becomes the sum of
  // its subtree, and the last leaf ends up holding the total.
  int offset = 1;
  // FILL ME IN (roughly 11 lines)
  for (int d = width / 2; d > 0; d /= 2) {
    __syncthreads();  // the previous level (or the load) is complete
    if (local_i < d) {
      int left = offset * (2 * local_i + 1) - 1;
      int right = offset * (2 * local_i + 2) - 1;
      left += CONFLICT_FREE_OFFSET(left);
      right += CONFLICT_FREE_OFFSET(right);
      temp[right] += temp[left];
    }
    offset *= 2;
  }
  // END FILL

  // Phase 2, down-sweep: the root gets 0 (nothing comes before the array); then every node
  // hands its prefix to its left child and prefix + (left subtree sum) to its right child.
  // FILL ME IN (roughly 14 lines)
  if (local_i == 0) temp[width - 1 + CONFLICT_FREE_OFFSET(width - 1)] = 0;
  for (int d = 1; d < width; d *= 2) {
    offset /= 2;
    __syncthreads();  // the level above is complete
    if (local_i < d) {
      int left = offset * (2 * local_i + 1) - 1;
      int right = offset * (2 * local_i + 2) - 1;
      left += CONFLICT_FREE_OFFSET(left);
      right += CONFLICT_FREE_OFFSET(right);
      const int left_sum = temp[left];
      temp[left] = temp[right];
      temp[right] += left_sum;
    }
  }
  // END FILL

  __syncthreads();  // the last level is complete
  // FILL ME IN (roughly 4 lines)
  if (owner) {
    if (ai < size) out[ai] = temp[ai + CONFLICT_FREE_OFFSET(ai)];
    if (bi < size) out[bi] = temp[bi + CONFLICT_FREE_OFFSET(bi)];
  }
  // END FILL
}

void p14_brent_kung(const int* d_in, int* d_out, int n, int tpb) {
  const int leaves = 2 * tpb;
  const size_t bytes = (leaves + CONFLICT_FREE_OFFSET(leaves - 1)) * sizeof(int);
  prefix_sum_brent_kung<<<1, tpb, bytes>>>(d_in, d_out, n);
}

// ---- complete: any size, any number of blocks (inclusive) ----------------------------------
// Block b scans its tile of 2 * TPB elements, a[b * 2 * TPB ..], and writes the tile's total to
// block_sums[b]. The totals are scanned (by the same host function, so it recurses while they
// do not fit in one block), then block b adds the scanned total of blocks 0..b-1.

// Each thread adds up its own two elements first and Kogge-Stone runs over those pair totals:
// half the threads, half the steps' work, and every global load and store is still parallel.
__global__ void scan_block_with_sums(const int* in, int* out, int* block_sums, int size) {
  extern __shared__ int pairs[];  // TPB ints: running totals of the threads' pairs
  const int local_i = threadIdx.x;
  const int tile_start = blockIdx.x * 2 * blockDim.x;
  const int i0 = tile_start + 2 * local_i;  // this thread's two elements
  const int i1 = i0 + 1;
  // FILL ME IN (roughly 12 lines)
  const int x0 = i0 < size ? in[i0] : 0;
  const int x1 = i1 < size ? in[i1] : 0;
  pairs[local_i] = x0 + x1;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    int current = 0;
    if (local_i >= offset) current = pairs[local_i - offset];
    __syncthreads();
    pairs[local_i] += current;
    __syncthreads();
  }
  const int before = pairs[local_i] - x0 - x1;  // sum of the tile before element i0
  // END FILL

  // Write the inclusive results; the last thread's running total is the whole tile's sum.
  // block_sums is null when the whole input fits in this one block.
  // FILL ME IN (roughly 3 lines)
  if (i0 < size) out[i0] = before + x0;
  if (i1 < size) out[i1] = before + x0 + x1;
  if (block_sums != nullptr && local_i == blockDim.x - 1) block_sums[blockIdx.x] = pairs[local_i];
  // END FILL
}

// Block b adds the total of all earlier tiles, scanned_sums[b - 1], to each element of tile b.
__global__ void add_block_offsets(int* out, const int* scanned_sums, int size) {
  const int local_i = threadIdx.x;
  const int tile_start = blockIdx.x * 2 * blockDim.x;
  // Elements are independent here, so use the mapping where neighbouring threads touch
  // neighbouring addresses (coalesced): first half of the tile, then the second half.
  const int i0 = tile_start + local_i;
  const int i1 = i0 + blockDim.x;
  // FILL ME IN (roughly 4 lines)
  if (blockIdx.x == 0) return;  // nothing comes before tile 0 (this kernel has no barrier)
  const int offset = scanned_sums[blockIdx.x - 1];
  if (i0 < size) out[i0] += offset;
  if (i1 < size) out[i1] += offset;
  // END FILL
}

// Given: scans n elements of d_in into d_out with blocks of tpb threads, recursing on the
// block totals. Every level shrinks the data 2 * tpb times, so 2^24 elements with tpb = 1024
// take three levels.
static void scan_any_size(const int* d_in, int* d_out, int n, int tpb) {
  const int tile = 2 * tpb;
  const int blocks = (n + tile - 1) / tile;
  const size_t shared_bytes = tpb * sizeof(int);
  if (blocks == 1) {
    scan_block_with_sums<<<1, tpb, shared_bytes>>>(d_in, d_out, nullptr, n);
    return;
  }
  int* d_sums = nullptr;     // total of each tile
  int* d_scanned = nullptr;  // inclusive scan of the totals
  cudaMalloc(&d_sums, blocks * sizeof(int));
  cudaMalloc(&d_scanned, blocks * sizeof(int));
  scan_block_with_sums<<<blocks, tpb, shared_bytes>>>(d_in, d_out, d_sums, n);  // step 1
  scan_any_size(d_sums, d_scanned, blocks, tpb);                                 // step 2
  add_block_offsets<<<blocks, tpb>>>(d_out, d_scanned, n);                       // step 3
  cudaFree(d_sums);
  cudaFree(d_scanned);
}

void p14_complete(const int* d_in, int* d_out, int n, int tpb) {
  scan_any_size(d_in, d_out, n, tpb);
}

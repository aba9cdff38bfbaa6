// Puzzle 14: prefix sum (scan).
//
// Inclusive scan: out[i] = a[0] + a[1] + ... + a[i]
// Exclusive scan: out[i] = a[0] + ... + a[i-1], and out[0] = 0
//
// Every variant is one kernel for you to write (its `FILL ME IN` regions) plus a host launcher,
// already written, that the driver (driver.cpp) calls before comparing `out` with a CPU reference.
// The block size (TPB) comes at run time: the launcher sizes shared memory (`extern __shared__`).
// puzzles/p14/README.md (in Korean: puzzles/p14/README.ko.md) walks through each variant.
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
  if (global_i < size) out[global_i] = shared[local_i];
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

// ---- single-pass: one launch, decoupled look-back (inclusive) ------------------------------
// --complete moves every element four times: read and write in step 1, read and write again in
// step 3, 16 bytes per int. A scan must move only 8: read each input once, write each result
// once. The single-pass scan (Merrill and Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", 2016; the algorithm of CUB's DeviceScan) gets there in one launch:
//
// 1. A block claims the next tile from a ticket counter (atomicAdd), not from blockIdx.x, so
//    the tiles before it belong to blocks that have already started: waiting for them always
//    ends, whatever order the GPU starts blocks in.
// 2. It scans its tile in registers: 16 ints per thread, loaded as four 16-byte int4.
// 3. It publishes its tile's sum (the aggregate), then looks back: one warp reads the status of
//    the 32 tiles before it at once, adding aggregates until it meets a tile that has published
//    its inclusive prefix (the sum of every tile up to and including it). That sum is this
//    tile's exclusive prefix; the block publishes its own inclusive prefix for the tiles after it.
// 4. It adds the prefix and writes its results.
//
// A tile's status is one 64-bit word: the flag in the high half, the value in the low half,
// written with one atomic store and read with one load. A reader that sees the flag sees the
// value with it. Kept apart (a flag array and a value array), the two would need fences: value
// store, __threadfence(), flag store in the writer; flag load, __threadfence(), value load in
// the reader, or another block may see the flag before the value (GPU memory is not
// sequentially consistent). One word needs neither, and each look-back round is one load.
// blockDim.x is a multiple of 32.

#define TILE_INVALID 0u    // nothing published yet
#define TILE_AGGREGATE 1u  // the value is the sum of tile t alone
#define TILE_INCLUSIVE 2u  // the value is the sum of tiles 0..t

// The status word of a flag and a value, and its two halves.
__device__ unsigned long long status_word(unsigned flag, int value) {
  return ((unsigned long long)flag << 32) | (unsigned)value;
}
__device__ unsigned status_flag(unsigned long long word) { return (unsigned)(word >> 32); }
__device__ int status_value(unsigned long long word) { return (int)(unsigned)word; }

// Ints per thread: CHUNKS int4 loads of four ints. A warp owns 32 * 4 * CHUNKS consecutive ints
// as CHUNKS rows of 32 int4, lane l holding int4 number l of each row, so each load instruction
// of the warp reads 512 consecutive bytes.
constexpr int kChunks = 4;

// Given: loads this lane's CHUNKS int4 of the warp's segment, which starts at int `seg`: row j
// of lane l is in[seg + 4 * (32 * j + l) .. + 3]. Past the end of the data it loads zeros, which
// change no sum, one int at a time (a 16-byte load there could read past the buffer).
template <int CHUNKS>
__device__ void load_rows(const int* __restrict__ in, int seg, int n, int4 (&v)[CHUNKS]) {
  const int lane = threadIdx.x % 32;
  if (seg + 128 * CHUNKS <= n) {
    const int4* in4 = reinterpret_cast<const int4*>(in + seg);  // seg is a multiple of 4
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) v[j] = in4[32 * j + lane];
  } else {
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
      const int i = seg + 4 * (32 * j + lane);
      v[j] = make_int4(i < n ? in[i] : 0, i + 1 < n ? in[i + 1] : 0, i + 2 < n ? in[i + 2] : 0, i + 3 < n ? in[i + 3] : 0);
    }
  }
}

// Given: the matching store, only the ints before n.
template <int CHUNKS>
__device__ void store_rows(int* __restrict__ out, int seg, int n, const int4 (&v)[CHUNKS]) {
  const int lane = threadIdx.x % 32;
  if (seg + 128 * CHUNKS <= n) {
    int4* out4 = reinterpret_cast<int4*>(out + seg);
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) out4[32 * j + lane] = v[j];
  } else {
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
      const int i = seg + 4 * (32 * j + lane);
      if (i < n) out[i] = v[j].x;
      if (i + 1 < n) out[i + 1] = v[j].y;
      if (i + 2 < n) out[i + 2] = v[j].z;
      if (i + 3 < n) out[i + 3] = v[j].w;
    }
  }
}

// Inclusive scan of v over the 32 lanes of the warp: lane l gets v(0) + ... + v(l). Kogge-Stone
// with __shfl_up_sync: no shared memory, no barrier, the _sync call is the lanes' meeting point.
__device__ int warp_inclusive_scan(int v) {
  const int lane = threadIdx.x % 32;
  // FILL ME IN (roughly 5 lines)
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += up;
  }
  // END FILL
  return v;
}

// The sum of v over the 32 lanes, in every lane (a butterfly of __shfl_xor_sync).
__device__ int warp_total(int v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// One thread publishes tile t's flag and value together: one atomic store of the status word
// (atomicExch on unsigned long long), which no reader can see half written.
__device__ void publish(unsigned long long* status, int t, unsigned flag, int value) {
  // FILL ME IN (roughly 1 line)
  atomicExch(&status[t], status_word(flag, value));
  // END FILL
}

// Called by a whole warp of the block that owns `tile` (> 0), after it published its aggregate:
// returns, in every lane, the sum of tiles 0..tile-1. Round by round, lane l looks at tile
// end - 1 - l (end = tile at first, then 32 less each round):
//   - spin (every lane re-reading its status word) until no lane sees TILE_INVALID;
//   - if some lane saw TILE_INCLUSIVE, the nearest such lane (the lowest lane number) ends the
//     walk: add the values of lanes 0..that lane and return; otherwise add all 32 and go on.
// Tiles before tile 0 (end - 1 - l < 0) count as TILE_INCLUSIVE with value 0 (tile 0 always
// publishes its inclusive prefix, so the walk stops there at the latest). Read the words through
// a volatile pointer: a plain load may be hoisted out of the loop and spin forever.
__device__ int look_back(const unsigned long long* status, int tile) {
  const int lane = threadIdx.x % 32;
  const volatile unsigned long long* vstatus = status;
  int prefix = 0;
  // FILL ME IN (roughly 13 lines)
  for (int end = tile;; end -= 32) {
    const int t = end - 1 - lane;
    unsigned long long word = t >= 0 ? vstatus[t] : status_word(TILE_INCLUSIVE, 0);
    while (__any_sync(0xffffffffu, status_flag(word) == TILE_INVALID))
      if (status_flag(word) == TILE_INVALID) word = vstatus[t];
    const unsigned flag = status_flag(word);
    int value = status_value(word);
    const unsigned inclusive = __ballot_sync(0xffffffffu, flag == TILE_INCLUSIVE);
    const int last = inclusive ? __ffs(inclusive) - 1 : 31;  // the last lane that counts
    if (lane > last) value = 0;
    prefix += warp_total(value);
    if (inclusive) break;
  }
  // END FILL
  return prefix;
}

template <int CHUNKS>
__global__ void scan_single_pass(const int* __restrict__ in, int* __restrict__ out, unsigned long long* status,
                                 unsigned* ticket, int n) {
  __shared__ int tile_shared;      // the tile this block claimed
  __shared__ int warp_offsets[32];  // each warp's total, then the sum of the warps before it
  __shared__ int prefix_shared;    // the sum of all tiles before this one
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;

  // 1. Claim a tile: thread 0 takes a ticket, and the whole block reads it after a barrier.
  int tile = 0;
  // FILL ME IN (roughly 3 lines)
  if (threadIdx.x == 0) tile_shared = (int)atomicAdd(ticket, 1u);
  __syncthreads();
  tile = tile_shared;
  // END FILL

  // 2. Load this warp's segment and scan it in registers: each int4 in place (x, x+y, ...),
  //    then row by row across the warp. chunk_offset[j] is the sum of the warp's ints before
  //    this lane's int4 of row j; warp_sum becomes the warp's whole segment.
  const int seg = (tile * warps + warp) * 128 * CHUNKS;
  int4 v[CHUNKS];
  load_rows<CHUNKS>(in, seg, n, v);
  int chunk_offset[CHUNKS];
  int warp_sum = 0;
  // FILL ME IN (roughly 9 lines)
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    v[j].y += v[j].x;
    v[j].z += v[j].y;
    v[j].w += v[j].z;
    const int row = warp_inclusive_scan(v[j].w);
    chunk_offset[j] = warp_sum + row - v[j].w;
    warp_sum += __shfl_sync(0xffffffffu, row, 31);
  }
  // END FILL
  if (lane == 0) warp_offsets[warp] = warp_sum;
  __syncthreads();

  // 3. Warp 0: scan the warp totals (each warp's offset in the tile, and the tile's aggregate),
  //    publish, look back, publish the inclusive prefix. Tile 0 has nothing to look back at: it
  //    publishes its inclusive prefix at once.
  if (warp == 0) {
    // FILL ME IN (roughly 13 lines)
    const int total = lane < warps ? warp_offsets[lane] : 0;
    const int incl = warp_inclusive_scan(total);
    const int aggregate = __shfl_sync(0xffffffffu, incl, 31);
    if (lane < warps) warp_offsets[lane] = incl - total;
    int prefix = 0;
    if (tile == 0) {
      if (lane == 0) publish(status, 0, TILE_INCLUSIVE, aggregate);
    } else {
      if (lane == 0) publish(status, tile, TILE_AGGREGATE, aggregate);
      prefix = look_back(status, tile);
      if (lane == 0) publish(status, tile, TILE_INCLUSIVE, prefix + aggregate);
    }
    if (lane == 0) prefix_shared = prefix;
    // END FILL
  }
  __syncthreads();

  // 4. Add what comes before each int4 and write the results.
  // FILL ME IN (roughly 10 lines)
  const int base = prefix_shared + warp_offsets[warp];
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int add = base + chunk_offset[j];
    v[j].x += add;
    v[j].y += add;
    v[j].z += add;
    v[j].w += add;
  }
  store_rows<CHUNKS>(out, seg, n, v);
  // END FILL
}

// d_work: scratch of at least 3 * ceil(n / tpb) + 1 ints: one 8-byte status word per tile, then
// the ticket. Every word must start as TILE_INVALID and the ticket at 0: the launcher clears
// them before each launch (as CUB runs a small initialisation kernel): 8 bytes per tile, next to
// the 32 KiB that a tile of 256 threads reads and writes.
void p14_single_pass(const int* d_in, int* d_out, int* d_work, int n, int tpb) {
  const int tile_ints = tpb * 4 * kChunks;
  const int tiles = (n + tile_ints - 1) / tile_ints;
  unsigned long long* status = reinterpret_cast<unsigned long long*>(d_work);  // cudaMalloc: 8-byte aligned
  unsigned* ticket = reinterpret_cast<unsigned*>(status + tiles);
  cudaMemsetAsync(d_work, 0, (size_t)tiles * sizeof(unsigned long long) + sizeof(unsigned));
  scan_single_pass<kChunks><<<tiles, tpb>>>(d_in, d_out, status, ticket, n);
}

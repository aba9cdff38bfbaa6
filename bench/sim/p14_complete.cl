// p14 --complete (solutions/p14/p14.cu) in OpenCL C, for bench_sim.py's PoCL and Oclgrind rows.
// The same kernels line for line: a work-group is a CUDA block, a work-item a thread, __local
// memory the shared memory (passed as a kernel argument of TPB ints, as the CUDA launcher sizes
// `extern __shared__`), and barrier(CLK_LOCAL_MEM_FENCE) stands where __syncthreads() does, so
// each implementation has the same barrier intervals to run as cudasim has.

// Block b scans its tile of 2 * TPB elements and writes the tile's total to block_sums[b];
// block_sums is null when the whole input fits in one work-group.
__kernel void scan_block_with_sums(__global const int* in, __global int* out, __global int* block_sums,
                                   int size, __local int* pairs) {
  const int local_i = get_local_id(0);
  const int tpb = get_local_size(0);
  const int tile_start = get_group_id(0) * 2 * tpb;
  const int i0 = tile_start + 2 * local_i;  // this work-item's two elements
  const int i1 = i0 + 1;
  const int x0 = i0 < size ? in[i0] : 0;
  const int x1 = i1 < size ? in[i1] : 0;
  pairs[local_i] = x0 + x1;
  barrier(CLK_LOCAL_MEM_FENCE);
  // Kogge-Stone over the pair totals: read, wait, add, wait.
  for (int offset = 1; offset < tpb; offset *= 2) {
    int current = 0;
    if (local_i >= offset) current = pairs[local_i - offset];
    barrier(CLK_LOCAL_MEM_FENCE);
    pairs[local_i] += current;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int before = pairs[local_i] - x0 - x1;  // sum of the tile before element i0
  if (i0 < size) out[i0] = before + x0;
  if (i1 < size) out[i1] = before + x0 + x1;
  if (block_sums != 0 && local_i == tpb - 1) block_sums[get_group_id(0)] = pairs[local_i];
}

// Block b adds the scanned total of tiles 0..b-1 to each element of tile b. No barrier, so the
// early return of group 0 is allowed.
__kernel void add_block_offsets(__global int* out, __global const int* scanned_sums, int size) {
  const int local_i = get_local_id(0);
  const int group = get_group_id(0);
  const int tile_start = group * 2 * get_local_size(0);
  const int i0 = tile_start + local_i;  // coalesced: first half of the tile, then the second
  const int i1 = i0 + get_local_size(0);
  if (group == 0) return;
  const int offset = scanned_sums[group - 1];
  if (i0 < size) out[i0] += offset;
  if (i1 < size) out[i1] += offset;
}

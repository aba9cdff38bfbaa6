// Cooperative groups that split warps by a value: labeled_partition of a warp tile (and of the
// resulting coalesced group again), binary_partition, with the thread block taken through
// block_tile_memory as portable code written for GPUs below sm_80 does. Each thread records its
// group's size, its rank, the group's sum (cg::reduce), the group's ballot of odd values and a
// shuffle from the group's rank 0; the host recomputes all of them from the labels.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

namespace cg = cooperative_groups;

struct Record {
  int size, rank, sum, ballot, first, inner_size, inner_rank, odd_size;
};

__global__ void partitions(const int* values, const int* labels, Record* out) {
  __shared__ cg::block_tile_memory<128> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = values[i];
  cg::coalesced_group same = cg::labeled_partition(warp, labels[i]);
  Record r;
  r.size = (int)same.size();
  r.rank = (int)same.thread_rank();
  r.sum = cg::reduce(same, v, cg::plus<int>());
  r.ballot = (int)same.ballot(v & 1);
  r.first = same.shfl(v, 0);
  // Within the group, by the value's parity: a partition of a coalesced group.
  cg::coalesced_group inner = cg::labeled_partition(same, v & 1);
  r.inner_size = (int)inner.size();
  r.inner_rank = (int)inner.thread_rank();
  cg::coalesced_group odd = cg::binary_partition(warp, (v & 1) != 0);
  r.odd_size = (int)odd.num_threads();
  out[i] = r;
}

int main() {
  const int blocks = 2, threads = 128, n = blocks * threads;
  std::vector<int> values(n), labels(n);
  for (int i = 0; i < n; ++i) {
    values[i] = (i * 37 + 11) % 23;
    labels[i] = (i * 5 + i / 7) % 4;  // four groups per warp, of uneven sizes
  }
  int *d_values, *d_labels;
  Record* d_out;
  cudaMalloc(&d_values, n * sizeof(int));
  cudaMalloc(&d_labels, n * sizeof(int));
  cudaMalloc(&d_out, n * sizeof(Record));
  cudaMemcpy(d_values, values.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_labels, labels.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  partitions<<<blocks, threads>>>(d_values, d_labels, d_out);
  std::vector<Record> out(n);
  cudaMemcpy(out.data(), d_out, n * sizeof(Record), cudaMemcpyDeviceToHost);

  int bad = 0;
  for (int i = 0; i < n; ++i) {
    int base = i / 32 * 32;
    Record e = {0, 0, 0, 0, -1, 0, 0, 0};
    for (int j = base; j < base + 32; ++j) {
      if ((values[j] & 1) == (values[i] & 1)) ++e.odd_size;
      if (labels[j] != labels[i]) continue;
      if (e.first < 0) e.first = values[j];
      if (values[j] & 1) e.ballot |= 1 << e.size;
      if (j < i) ++e.rank;
      e.sum += values[j];
      ++e.size;
      if ((values[j] & 1) == (values[i] & 1)) {
        if (j < i) ++e.inner_rank;
        ++e.inner_size;
      }
    }
    const Record& g = out[i];
    if (g.size != e.size || g.rank != e.rank || g.sum != e.sum || g.ballot != e.ballot || g.first != e.first ||
        g.inner_size != e.inner_size || g.inner_rank != e.inner_rank || g.odd_size != e.odd_size) {
      if (bad++ < 5)
        printf("thread %d (label %d): size %d rank %d sum %d ballot %x first %d inner %d/%d odd %d; expected %d %d %d %x %d %d/%d %d\n",
               i, labels[i], g.size, g.rank, g.sum, g.ballot, g.first, g.inner_rank, g.inner_size, g.odd_size, e.size, e.rank,
               e.sum, e.ballot, e.first, e.inner_rank, e.inner_size, e.odd_size);
    }
  }
  printf("%d threads in 4 labeled groups per warp: %d differ\n", n, bad);
  cudaFree(d_values);
  cudaFree(d_labels);
  cudaFree(d_out);
  if (bad) {
    printf("Test FAILED\n");
    return 1;
  }
  printf("Test PASSED\n");
  return 0;
}

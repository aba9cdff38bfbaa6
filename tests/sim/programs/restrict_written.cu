// A `const int* __restrict__` parameter that points at data another block writes in the same launch:
// the same buffer is passed twice, as the writer's `table` and as the reader's `src`. __restrict__ on
// a pointer to const promises nvcc that the data does not change during the launch, so it may load
// it through the read-only (non-coherent) cache, as __ldg does, and the writer's fence and flag do
// not make the new values visible there. `--no-restrict` launches the same kernel without the
// promise: a release (fence, flag) and an acquire (flag, fence) then order the table.
#include <cstdio>
#include <cstring>

template <typename Src>
__device__ void fill_then_read(int* table, Src src, int* flag, int* out, unsigned* ticket) {
  // Roles from a ticket: the block that starts first writes, the other waits for it.
  __shared__ unsigned role;
  if (threadIdx.x == 0) role = atomicAdd(ticket, 1u);
  __syncthreads();
  if (role == 0) {
    table[threadIdx.x] = 5 * threadIdx.x;  // @table-store
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicExch(flag, 1);
    }
  } else {
    if (threadIdx.x == 0) {
      while (atomicAdd(flag, 0) == 0) {
      }
      __threadfence();
    }
    __syncthreads();
    out[threadIdx.x] = src[threadIdx.x];  // @table-load
  }
}

__global__ void publish_restrict(int* table, const int* __restrict__ src, int* flag, int* out, unsigned* ticket) {
  fill_then_read(table, src, flag, out, ticket);
}

__global__ void publish_plain(int* table, const int* src, int* flag, int* out, unsigned* ticket) {
  fill_then_read(table, src, flag, out, ticket);
}

int main(int argc, char** argv) {
  const bool plain = argc > 1 && std::strcmp(argv[1], "--no-restrict") == 0;
  const int threads = 64;
  int *d_table, *d_flag, *d_out;
  unsigned* d_ticket;
  cudaMalloc(&d_table, threads * sizeof(int));
  cudaMalloc(&d_flag, sizeof(int));
  cudaMalloc(&d_out, threads * sizeof(int));
  cudaMalloc(&d_ticket, sizeof(unsigned));
  cudaMemset(d_ticket, 0, sizeof(unsigned));
  cudaMemset(d_flag, 0, sizeof(int));
  if (plain)
    publish_plain<<<2, threads>>>(d_table, d_table, d_flag, d_out, d_ticket);
  else
    publish_restrict<<<2, threads>>>(d_table, d_table, d_flag, d_out, d_ticket);
  int h[threads];
  cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int t = 0; t < threads; ++t) ok = ok && h[t] == 5 * t;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_table);
  cudaFree(d_flag);
  cudaFree(d_out);
  cudaFree(d_ticket);
  return ok ? 0 : 1;
}

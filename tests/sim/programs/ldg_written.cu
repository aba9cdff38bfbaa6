// __ldg of data that another block writes in the same launch: the first block to start fills a table, publishes
// it (__threadfence(), then a flag), and the other reads the table through the read-only cache with
// __ldg. The read-only cache is not coherent with writes made during the launch, and no fence
// changes that: the read may return stale data. `--plain-load` reads with a plain load instead.
#include <cstdio>
#include <cstring>

__global__ void fill_then_read(int* table, int* flag, int* out, unsigned* ticket, bool plain_load) {
  // The block that starts first writes and the other reads: the roles come from a ticket, not from
  // blockIdx, because a GPU starts blocks in no guaranteed order (a reader that started first and
  // waited for a writer that cannot start would wait for ever).
  __shared__ unsigned role;
  if (threadIdx.x == 0) role = atomicAdd(ticket, 1u);
  __syncthreads();
  if (role == 0) {
    table[threadIdx.x] = 3 * threadIdx.x;  // @table-store
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
    out[threadIdx.x] = plain_load ? table[threadIdx.x] : __ldg(&table[threadIdx.x]);  // @table-load
  }
}

int main(int argc, char** argv) {
  const bool plain = argc > 1 && std::strcmp(argv[1], "--plain-load") == 0;
  const int threads = 64;
  int *d_table, *d_flag, *d_out;
  cudaMalloc(&d_table, threads * sizeof(int));
  cudaMalloc(&d_flag, sizeof(int));
  cudaMalloc(&d_out, threads * sizeof(int));
  unsigned* d_ticket;
  cudaMalloc(&d_ticket, sizeof(unsigned));
  cudaMemset(d_ticket, 0, sizeof(unsigned));
  cudaMemset(d_flag, 0, sizeof(int));
  fill_then_read<<<2, threads>>>(d_table, d_flag, d_out, d_ticket, plain);
  int h[threads];
  cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int t = 0; t < threads; ++t) ok = ok && h[t] == 3 * t;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_table);
  cudaFree(d_flag);
  cudaFree(d_ticket);
  cudaFree(d_out);
  return ok ? 0 : 1;
}

// Stream compaction with an index taken from an atomic: each kept element goes to
// out[atomicAdd(&count, 1)]. The order of the output is unspecified on a GPU too (the blocks and
// warps take indices in any order), so the check compares the output as a set. The simulator's
// schedules produce different orders: a note, not a race.
#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void keep_multiples_of_3(const int* in, int n, int* out, int* count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] % 3 == 0) out[atomicAdd(count, 1)] = in[i];
}

int main() {
  const int n = 5000;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % n;
  int *d_in, *d_out, *d_count;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_out, n * sizeof(int));
  cudaMalloc(&d_count, sizeof(int));
  cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(d_count, 0, sizeof(int));
  keep_multiples_of_3<<<(n + 255) / 256, 256>>>(d_in, n, d_out, d_count);
  int count = 0;
  cudaMemcpy(&count, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  std::vector<int> out(count > 0 ? count : 0);
  cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost);
  std::vector<int> want;
  for (int x : h)
    if (x % 3 == 0) want.push_back(x);
  std::sort(out.begin(), out.end());
  std::sort(want.begin(), want.end());
  const bool ok = out == want;
  printf("%d of %d kept\n%s\n", count, n, ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_count);
  return ok ? 0 : 1;
}

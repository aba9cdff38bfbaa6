// An inclusive scan of a large array (default 6.8 M ints, as NVIDIA's scan sample), written here
// for scripts/bench_sim.py: each block of 512 threads scans 1024 elements in shared memory
// (Blelloch up-sweep and down-sweep), a second launch scans the block totals, a third adds them
// back; ITERS times.   python3 scripts/puzzle.py sim bench/sim/scan_large.cu -- [N] [ITERS]
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int THREADS = 512, ELEMS = 2 * THREADS;

__global__ void scan_blocks(int* out, int* totals, const int* in, int n) {
  __shared__ int s[ELEMS];
  const int base = blockIdx.x * ELEMS, t = threadIdx.x;
  s[t] = base + t < n ? in[base + t] : 0;
  s[t + THREADS] = base + t + THREADS < n ? in[base + t + THREADS] : 0;
  for (int d = 1; d < ELEMS; d *= 2) {  // up-sweep
    __syncthreads();
    int i = (t + 1) * 2 * d - 1;
    if (i < ELEMS) s[i] += s[i - d];
  }
  for (int d = ELEMS / 4; d >= 1; d /= 2) {  // down-sweep to an inclusive scan
    __syncthreads();
    int i = (t + 1) * 2 * d - 1;
    if (i + d < ELEMS) s[i + d] += s[i];
  }
  __syncthreads();
  if (base + t < n) out[base + t] = s[t];
  if (base + t + THREADS < n) out[base + t + THREADS] = s[t + THREADS];
  if (t == 0 && totals) totals[blockIdx.x] = s[ELEMS - 1];
}

__global__ void add_offsets(int* out, const int* scanned_totals, int n) {
  const int i = blockIdx.x * ELEMS + threadIdx.x;
  if (blockIdx.x == 0) return;
  const int add = scanned_totals[blockIdx.x - 1];
  if (i < n) out[i] += add;
  if (i + THREADS < n) out[i + THREADS] += add;
}

// Scans `n` ints of `in` into `out` with `totals` (one per block) and `tmp` as scratch.
static void scan(int* out, const int* in, int n, int* totals, int* tmp) {
  const int blocks = (n + ELEMS - 1) / ELEMS;
  if (blocks == 1) {
    scan_blocks<<<1, THREADS>>>(out, nullptr, in, n);
    return;
  }
  scan_blocks<<<blocks, THREADS>>>(out, totals, in, n);
  scan(tmp, totals, blocks, totals + blocks, tmp + blocks);
  add_offsets<<<blocks, THREADS>>>(out, tmp, n);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 6800000;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 100;
  std::vector<int> h(n), r(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7 + 3) % 5;
  int *in, *out, *totals, *tmp;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  cudaMalloc(&totals, (n / ELEMS + 64) * sizeof(int));
  cudaMalloc(&tmp, (n / ELEMS + 64) * sizeof(int));
  cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  for (int i = 0; i < iters; ++i) scan(out, in, n, totals, tmp);
  cudaMemcpy(r.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
  long long sum = 0;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    sum += h[i];
    if (r[i] != (int)sum) ++bad;
  }
  std::printf("scan_large: %d elements, %d iterations: %s\n", n, iters, bad ? "WRONG" : "ok");
  return bad ? 1 : 0;
}

// Message passing between blocks: the first block writes a message and raises a flag, the second waits for
// the flag and reads the message. The flag is a cuda::atomic_ref: a release store and an acquire
// load order the message (the default). `--relaxed` uses relaxed orders, `--fence-block` a relaxed
// flag with __threadfence_block() on both sides: neither orders anything between blocks (a race).
// `--fence` uses __threadfence() on both sides, which does.
#include <cuda/atomic>
#include <cstdio>
#include <cstring>

enum Mode { AcquireRelease, Relaxed, FenceBlock, FenceDevice };

__global__ void pass(int* message, int* flag, int* received, unsigned* ticket, Mode mode) {
  // The block that starts first writes and the other reads: the roles come from a ticket, not from
  // blockIdx, because a GPU starts blocks in no guaranteed order (a reader that started first and
  // waited for a writer that cannot start would wait for ever).
  __shared__ unsigned role;
  if (threadIdx.x == 0) role = atomicAdd(ticket, 1u);
  __syncthreads();
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  const bool ordered = mode == AcquireRelease;
  if (role == 0) {
    message[threadIdx.x] = 1000 + threadIdx.x;  // @message-store
    __syncthreads();  // the block's stores come before thread 0's release
    if (threadIdx.x == 0) {
      if (mode == FenceBlock) __threadfence_block();  // @writer-fence-block
      if (mode == FenceDevice) __threadfence();
      f.store(1, ordered ? cuda::std::memory_order_release : cuda::std::memory_order_relaxed);
    }
  } else {
    if (threadIdx.x == 0) {
      while (f.load(ordered ? cuda::std::memory_order_acquire : cuda::std::memory_order_relaxed) == 0) {
      }
      if (mode == FenceBlock) __threadfence_block();
      if (mode == FenceDevice) __threadfence();
    }
    __syncthreads();  // thread 0's acquire, then the block's loads
    received[threadIdx.x] = message[threadIdx.x];  // @message-load
  }
}

int main(int argc, char** argv) {
  Mode mode = AcquireRelease;
  if (argc > 1 && std::strcmp(argv[1], "--relaxed") == 0) mode = Relaxed;
  if (argc > 1 && std::strcmp(argv[1], "--fence-block") == 0) mode = FenceBlock;
  if (argc > 1 && std::strcmp(argv[1], "--fence") == 0) mode = FenceDevice;
  const int threads = 64;
  int *d_message, *d_flag, *d_received;
  cudaMalloc(&d_message, threads * sizeof(int));
  cudaMalloc(&d_flag, sizeof(int));
  cudaMalloc(&d_received, threads * sizeof(int));
  unsigned* d_ticket;
  cudaMalloc(&d_ticket, sizeof(unsigned));
  cudaMemset(d_ticket, 0, sizeof(unsigned));
  cudaMemset(d_flag, 0, sizeof(int));
  pass<<<2, threads>>>(d_message, d_flag, d_received, d_ticket, mode);
  int h[threads];
  cudaMemcpy(h, d_received, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int t = 0; t < threads; ++t) ok = ok && h[t] == 1000 + t;
  printf("%s\n", ok ? "Test PASSED" : "Test FAILED");
  cudaFree(d_message);
  cudaFree(d_flag);
  cudaFree(d_ticket);
  cudaFree(d_received);
  return ok ? 0 : 1;
}

// Host-side runtime API. Kernels run synchronously at launch; misuse that CUDA reports through an
// error code returns the same code and also prints what went wrong and where.
#pragma once

#define CUDASIM_SITE const char* file = __builtin_FILE(), int line = __builtin_LINE()

cudaError_t cudaMalloc(void** p, size_t bytes, CUDASIM_SITE);
namespace cudasim { namespace detail {
cudaError_t malloc_typed(void** p, size_t bytes, size_t elem, const char* type, const char* file, int line);
template <class T> const char* type_name() {
  if (std::is_same<T, int>::value) return "int";
  if (std::is_same<T, unsigned>::value) return "unsigned";
  if (std::is_same<T, float>::value) return "float";
  if (std::is_same<T, double>::value) return "double";
  if (std::is_same<T, long long>::value) return "long long";
  if (std::is_same<T, unsigned long long>::value) return "unsigned long long";
  if (std::is_same<T, char>::value || std::is_same<T, unsigned char>::value) return "char";
  if (std::is_same<T, int4>::value) return "int4";
  if (std::is_same<T, float4>::value) return "float4";
  return nullptr;
}
}}  // namespace cudasim::detail
template <class T>
cudaError_t cudaMalloc(T** p, size_t bytes, CUDASIM_SITE) {
  constexpr size_t elem = std::is_void<T>::value ? 1 : sizeof(std::conditional_t<std::is_void<T>::value, char, T>);
  return ::cudasim::detail::malloc_typed(reinterpret_cast<void**>(p), bytes, elem,
                                         ::cudasim::detail::type_name<std::remove_cv_t<T>>(), file, line);
}
cudaError_t cudaFree(void* p, CUDASIM_SITE);
cudaError_t cudaMallocHost(void** p, size_t bytes, CUDASIM_SITE);
template <class T>
cudaError_t cudaMallocHost(T** p, size_t bytes, CUDASIM_SITE) { return cudaMallocHost(reinterpret_cast<void**>(p), bytes, file, line); }
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, CUDASIM_SITE);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = nullptr, CUDASIM_SITE);
cudaError_t cudaMemset(void* p, int value, size_t bytes, CUDASIM_SITE);
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s = nullptr, CUDASIM_SITE);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t e);
const char* cudaGetErrorName(cudaError_t e);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaGetDevice(int* d);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
template <class K>
cudaError_t cudaFuncSetAttribute(K*, cudaFuncAttribute, int) { return cudaSuccess; }

// ---- what teaching code and NVIDIA's helper headers (helper_cuda.h) also use ---------------
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* v);
cudaError_t cudaRuntimeGetVersion(int* v);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit);
cudaError_t cudaSetDeviceFlags(unsigned flags);
cudaError_t cudaGetDeviceFlags(unsigned* flags);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache c);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig c);
template <class K>
cudaError_t cudaFuncSetCacheConfig(K*, cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int priority);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaProfilerStart();
cudaError_t cudaProfilerStop();

// Managed memory: one buffer that host code and kernels both use. The simulator checks kernels'
// accesses to it like cudaMalloc memory (bounds, races); host code may read and write it between
// launches. It starts zeroed (what a GPU's driver gives in practice).
cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned flags = cudaMemAttachGlobal, CUDASIM_SITE);
namespace cudasim { namespace detail {
cudaError_t malloc_managed(void** p, size_t bytes, size_t elem, const char* type, unsigned flags, const char* file, int line);
}}  // namespace cudasim::detail
template <class T>
cudaError_t cudaMallocManaged(T** p, size_t bytes, unsigned flags = cudaMemAttachGlobal, CUDASIM_SITE) {
  constexpr size_t elem = std::is_void<T>::value ? 1 : sizeof(std::conditional_t<std::is_void<T>::value, char, T>);
  return ::cudasim::detail::malloc_managed(reinterpret_cast<void**>(p), bytes, elem,
                                           ::cudasim::detail::type_name<std::remove_cv_t<T>>(), flags, file, line);
}
cudaError_t cudaMemPrefetchAsync(const void* p, size_t bytes, int device, cudaStream_t s = nullptr, CUDASIM_SITE);
cudaError_t cudaMemAdvise(const void* p, size_t bytes, cudaMemoryAdvise advice, int device);
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s, CUDASIM_SITE);
template <class T>
cudaError_t cudaMallocAsync(T** p, size_t bytes, cudaStream_t /*stream: all work runs in order*/, CUDASIM_SITE) {
  return cudaMalloc(p, bytes, file, line);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t s, CUDASIM_SITE);
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned flags, CUDASIM_SITE);
template <class T>
cudaError_t cudaHostAlloc(T** p, size_t bytes, unsigned flags, CUDASIM_SITE) {
  return cudaHostAlloc(reinterpret_cast<void**>(p), bytes, flags, file, line);
}
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height, CUDASIM_SITE);
template <class T>
cudaError_t cudaMallocPitch(T** p, size_t* pitch, size_t width, size_t height, CUDASIM_SITE) {
  return cudaMallocPitch(reinterpret_cast<void**>(p), pitch, width, height, file, line);
}
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, CUDASIM_SITE);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s = nullptr, CUDASIM_SITE);
cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height, CUDASIM_SITE);

// __device__ and __constant__ variables are ordinary variables on the simulator; these copy into
// and out of them with CUDA's bounds and direction checks.
namespace cudasim { namespace detail {
cudaError_t copy_symbol(void* symbol, size_t symbol_bytes, const char* what, void* other, size_t count, size_t offset,
                        cudaMemcpyKind kind, bool to_symbol, const char* file, int line);
}}  // namespace cudasim::detail
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice, CUDASIM_SITE) {
  return ::cudasim::detail::copy_symbol((void*)&symbol, sizeof(T), "cudaMemcpyToSymbol", const_cast<void*>(src), count, offset,
                                        kind, true, file, line);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost, CUDASIM_SITE) {
  return ::cudasim::detail::copy_symbol((void*)&symbol, sizeof(T), "cudaMemcpyFromSymbol", dst, count, offset, kind, false,
                                        file, line);
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t = nullptr, CUDASIM_SITE) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind, file, line);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = nullptr, CUDASIM_SITE) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind, file, line);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** p, const T& symbol) {
  *p = (void*)&symbol;
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(size_t* bytes, const T&) {
  *bytes = sizeof(T);
  return cudaSuccess;
}

// Occupancy: the simulator has no registers to count, so these follow the thread, block and shared
// memory limits of the device cudaGetDeviceProperties describes (2048 threads and 32 blocks per
// multiprocessor, 48 KiB of shared memory per block).
namespace cudasim { namespace detail {
int occupancy_blocks(int block_size, size_t dyn_shared);
int default_block_size(int limit);
}}  // namespace cudasim::detail
template <class K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, K, int block_size, size_t dyn_shared) {
  *blocks = ::cudasim::detail::occupancy_blocks(block_size, dyn_shared);
  return cudaSuccess;
}
template <class K>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, K, size_t dyn_shared = 0, int limit = 0) {
  int props_sm = 0;
  cudaDeviceGetAttribute(&props_sm, cudaDevAttrMultiProcessorCount, 0);
  *block_size = ::cudasim::detail::default_block_size(limit);
  *min_grid = props_sm * ::cudasim::detail::occupancy_blocks(*block_size, dyn_shared);
  return cudaSuccess;
}

#undef CUDASIM_SITE

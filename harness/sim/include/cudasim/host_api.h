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

#undef CUDASIM_SITE

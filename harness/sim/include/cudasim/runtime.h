// cudasim: the CUDA runtime and device API, executed on the CPU.
//
// A learner's .cu file is translated by harness/sim/cu2cpp.py (launch syntax, shared memory) and
// compiled by an ordinary C++17 compiler with this header force-included. Every CUDA thread runs
// as a fiber; see harness/sim/README.md for the execution model and the diagnostics.
#pragma once

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <tuple>
#include <type_traits>
#include <utility>

#define CUDASIM 1
// A file compiled for the uninstrumented build of a program (without the memory checker's calls,
// harness/sim/src/fast_build.cpp) marks the executable as one: the simulator then does not start it
// again, and refuses what needs the calls. Weak: each translated file of a program defines it.
#if defined(CUDASIM_UNINSTRUMENTED)
extern "C" __attribute__((weak)) const char cudasim_uninstrumented_build = 1;
#endif
// The version and include guards of the CUDA runtime headers this one stands for, so that code
// testing them (NVIDIA's helper_cuda.h: `#ifdef __DRIVER_TYPES_H__`) sees a CUDA runtime, and a
// toolkit header included by mistake does not define everything a second time.
#define CUDART_VERSION 12000
#define __CUDART_API_VERSION CUDART_VERSION
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __VECTOR_FUNCTIONS_H__
#define __DEVICE_TYPES_H__
#define __HOST_DEFINES_H__
#define __DEVICE_LAUNCH_PARAMETERS_H__
#define __CUDA_PROFILER_API_H__

// ---- qualifiers -----------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// Shared memory is per worker thread; a worker runs one block at a time, so each block sees its
// own copy. cu2cpp.py also registers function-scope arrays so they are poisoned per block.
#define __shared__ static __thread

#include "cudasim/vector_types.h"

// ---- errors ---------------------------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorLaunchFailure = 4,
  cudaErrorLaunchOutOfResources = 7,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorUnsupportedLimit = 215,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorUnknown = 999,
};
using cudaError = cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
// cudaDeviceSetLimit / cudaDeviceGetLimit (CUDA's numbering).
enum cudaLimit {
  cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2, cudaLimitDevRuntimeSyncDepth = 3,
  cudaLimitDevRuntimePendingLaunchCount = 4, cudaLimitMaxL2FetchGranularity = 5, cudaLimitPersistingL2CacheSize = 6,
};
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1, cudaSharedMemBankSizeEightByte = 2 };
enum cudaComputeMode { cudaComputeModeDefault = 0, cudaComputeModeExclusive = 1, cudaComputeModeProhibited = 2,
                       cudaComputeModeExclusiveProcess = 3 };
enum cudaMemoryAdvise { cudaMemAdviseSetReadMostly = 1, cudaMemAdviseUnsetReadMostly = 2, cudaMemAdviseSetPreferredLocation = 3,
                        cudaMemAdviseUnsetPreferredLocation = 4, cudaMemAdviseSetAccessedBy = 5, cudaMemAdviseUnsetAccessedBy = 6 };
// The attributes cudaDeviceGetAttribute answers (CUDA's numbering).
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxBlockDimX = 2, cudaDevAttrMaxBlockDimY = 3, cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5, cudaDevAttrMaxGridDimY = 6, cudaDevAttrMaxGridDimZ = 7, cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9, cudaDevAttrWarpSize = 10, cudaDevAttrMaxRegistersPerBlock = 12, cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16, cudaDevAttrKernelExecTimeout = 17, cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19, cudaDevAttrComputeMode = 20, cudaDevAttrConcurrentKernels = 31, cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33, cudaDevAttrPciDeviceId = 34, cudaDevAttrMemoryClockRate = 36, cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38, cudaDevAttrMaxThreadsPerMultiProcessor = 39, cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41, cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81, cudaDevAttrMaxRegistersPerMultiprocessor = 82, cudaDevAttrManagedMemory = 83,
  cudaDevAttrConcurrentManagedAccess = 89, cudaDevAttrCooperativeLaunch = 95, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
};
enum : unsigned {
  cudaMemAttachGlobal = 1, cudaMemAttachHost = 2, cudaMemAttachSingle = 4,
  cudaStreamDefault = 0, cudaStreamNonBlocking = 1,
  cudaEventDefault = 0, cudaEventBlockingSync = 1, cudaEventDisableTiming = 2, cudaEventInterprocess = 4,
  cudaHostAllocDefault = 0, cudaHostAllocPortable = 1, cudaHostAllocMapped = 2, cudaHostAllocWriteCombined = 4,
  cudaDeviceScheduleAuto = 0, cudaDeviceScheduleSpin = 1, cudaDeviceScheduleYield = 2, cudaDeviceScheduleBlockingSync = 4,
  cudaDeviceMapHost = 8,
};
constexpr int cudaCpuDeviceId = -1;
constexpr int cudaInvalidDeviceId = -2;

struct CUstream_st;
using cudaStream_t = CUstream_st*;
struct CUevent_st;
using cudaEvent_t = CUevent_st*;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int multiProcessorCount;
  int major;
  int minor;
  int clockRate;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  size_t sharedMemPerBlockOptin;
  size_t totalConstMem;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int maxThreadsPerMultiProcessor;
  int maxBlocksPerMultiProcessor;
  int computeMode;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int deviceOverlap;
  int asyncEngineCount;
  int unifiedAddressing;
  int managedMemory;
  int concurrentManagedAccess;
  int cooperativeLaunch;
  int kernelExecTimeoutEnabled;
  size_t memPitch;
  size_t textureAlignment;
};

namespace cudasim {

// ---- internal: the state visible to device code --------------------------------------------
namespace detail {
struct Thread;
struct Block;
// Member names differ from the built-ins, which are macros.
struct ThreadView {  // what built-ins read; first member of the simulator's Thread
  uint3 tid;
  unsigned lane;
};
struct BlockView {
  uint3 bid;
  dim3 bdim;
  dim3 gdim;
  unsigned char* dyn_shared;
};
// The running thread and block of this worker (null outside a kernel), and copies of what they
// hold for the built-in variables: the engine writes them when it switches to a thread or starts
// a block (scheduler.cpp).
extern __thread ThreadView* tl_thread;
extern __thread BlockView* tl_block;
extern __thread ThreadView tl_thread_view;
extern __thread BlockView tl_block_view;

// Device code reads the same four thread-locals under const names (the asm labels bind them to
// the engine's symbols). To a running CUDA thread they are constant: the engine changes them
// only while that thread is suspended and restores its values before it resumes. Declared const,
// the compiler keeps threadIdx and blockDim in registers across __syncthreads() calls, as on a
// GPU, and ThreadSanitizer's instrumentation, which skips constant objects, adds no call to the
// checker for them (they are not memory the checker watches). A const object counts as constant
// only if its type has no constructor, which dim3 has: the block's view is declared as plain
// data of the same layout.
struct BlockViewData {
  unsigned bid[3], bdim[3], gdim[3];
  unsigned char* dyn_shared;
};
static_assert(sizeof(BlockViewData) == sizeof(BlockView) && offsetof(BlockViewData, bdim) == offsetof(BlockView, bdim) &&
                  offsetof(BlockViewData, gdim) == offsetof(BlockView, gdim) &&
                  offsetof(BlockViewData, dyn_shared) == offsetof(BlockView, dyn_shared),
              "BlockViewData mirrors BlockView");
#define CUDASIM_STR2(x) #x
#define CUDASIM_STR(x) CUDASIM_STR2(x)
#define CUDASIM_SYMBOL(name) __asm__(CUDASIM_STR(__USER_LABEL_PREFIX__) name)
extern __thread ThreadView* const tl_thread_ro CUDASIM_SYMBOL("_ZN7cudasim6detail9tl_threadE");
extern __thread BlockView* const tl_block_ro CUDASIM_SYMBOL("_ZN7cudasim6detail8tl_blockE");
extern __thread const ThreadView tl_thread_view_ro CUDASIM_SYMBOL("_ZN7cudasim6detail14tl_thread_viewE");
extern __thread const BlockViewData tl_block_view_ro CUDASIM_SYMBOL("_ZN7cudasim6detail13tl_block_viewE");
#undef CUDASIM_SYMBOL
#undef CUDASIM_STR
#undef CUDASIM_STR2

[[noreturn]] void device_misuse(const char* what, const char* file, int line);
inline const ThreadView& cur_thread(const char* what) {
  if (__builtin_expect(tl_thread_ro == nullptr, 0)) device_misuse(what, nullptr, 0);
  return tl_thread_view_ro;
}
// The object is the engine's BlockView; only this declaration names it as BlockViewData (above).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-aliasing"
inline const BlockView& cur_block(const char* what) {
  if (__builtin_expect(tl_block_ro == nullptr, 0)) device_misuse(what, nullptr, 0);
  return reinterpret_cast<const BlockView&>(tl_block_view_ro);
}
#pragma GCC diagnostic pop

void syncthreads(const char* file, int line);
int syncthreads_reduce(int kind, int pred, const char* file, int line);

enum class WarpOp : uint8_t { Sync, ShflIdx, ShflUp, ShflDown, ShflXor, Ballot, Any, All, ReduceAdd, ReduceMin, ReduceMax, Activemask };
// One warp collective: lanes in mask meet; value/param are this lane's operands.
uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int param, int width, int value_bytes,
                         bool is_signed, const char* file, int line);

// The block's storage for a `__shared__` declaration inside a kernel (cu2cpp.py emits the call):
// the same address for every thread of the block, fresh garbage for every block.
void* static_shared_raw(size_t bytes, size_t align, size_t elem, const char* name, const char* file, int line);
template <class T>
T& static_shared(const char* name, const char* file, int line) {
  return *static_cast<T*>(static_shared_raw(sizeof(T), alignof(T), sizeof(std::remove_all_extents_t<T>), name, file, line));
}
// The block's dynamic shared memory; the first name a block uses for it is the one reports show.
unsigned char* dynamic_shared(const char* name, size_t elem);
// A translated file whose shared memory stays `static __thread` (cu2cpp: a namespace-scope
// __shared__ and the like) registers itself: blocks then never take turns on one OS thread.
bool note_thread_local_shared(const char* file);

// The state of a cuda::barrier<cuda::thread_scope_block> (see <cuda/barrier>): plain data, so it
// can live in __shared__ memory, where it starts as garbage until init().
struct CBarState {
  uint32_t magic;  // kCBarMagic once initialised
  int32_t expected;
  int32_t pending;  // arrivals still missing in the current phase
  uint32_t phase;
  const char* init_file;
  int init_line;
};
void cbar_init(CBarState* b, long expected, const char* file, int line);
uint64_t cbar_arrive(CBarState* b, long update, bool drop, const char* file, int line);  // returns the phase token
void cbar_wait(CBarState* b, uint64_t token, const char* file, int line);
void threadfence();
// The scope of a fence or an atomic, as the memory checker models it: an operation orders (a
// fence) or is atomic (an atomic) only among the threads its scope contains. Device is 0 so that
// the per-thread "scope of the next atomic" (set by the _block/_system wrappers and cuda::atomic_ref,
// read by the access front end) is device scope when nothing set it.
enum : unsigned char { kScopeDevice = 0, kScopeSystem = 1, kScopeBlock = 2, kScopeThread = 3 };
// Set through a call into the (uninstrumented) library: a store from the instrumented file would be
// an access of its own, which the polling watch would take for a write between two polls.
void set_atomic_scope(unsigned char scope);  // access.cpp
void scoped_fence(unsigned char scope);  // access.cpp

// Kernel launch plumbing.
struct LaunchSite {
  const char* kernel;
  const char* file;
  int line;
  const char* params;  // the kernel's parameter names, comma-separated ("" when unknown)
};
using Invoke = void (*)(const void* args);
// Each argument is checked: a pointer must be null or point into device memory.
struct ArgCheck {
  const void* ptr;
  int index;
};
void launch(const LaunchSite& site, dim3 grid, dim3 block, size_t shmem, Invoke invoke, const void* args,
            const ArgCheck* ptr_args, int n_ptr_args);

template <class T>
uintptr_t ptr_bits(const T& v) {
  if constexpr (std::is_pointer<std::decay_t<T>>::value) {
    std::decay_t<const T&> p = v;  // arrays decay to pointers, as when passed to a kernel
    return (uintptr_t)p;
  } else {
    return 0;
  }
}

template <class Tuple, size_t... I>
int collect_ptrs(const Tuple& t, ArgCheck* out, std::index_sequence<I...>) {
  int n = 0;
  (void)std::initializer_list<int>{
      (std::is_pointer<std::decay_t<std::tuple_element_t<I, Tuple>>>::value ? (out[n++] = ArgCheck{(const void*)ptr_bits(std::get<I>(t)), (int)I}, 0)
                                                               : 0)...,
      0};
  (void)t;
  return n;
}

}  // namespace detail

// Translated `k<<<g, b, s, st>>>(args)` lands here as
//   launch(KernelCall, "k", __FILE__, __LINE__, g, b, s, st)(args)
// where KernelCall is a generic lambda that calls k. Calling through the lambda lets the compiler
// deduce a template kernel's arguments and fill in default arguments, as nvcc does.
template <class Call>
struct KernelLaunch {
  Call call;
  detail::LaunchSite site;
  dim3 grid, block;
  size_t shmem;

  template <class... A>
  void operator()(A&&... a) const {
    // References to the launch's arguments: a launch runs the whole grid before it returns, so
    // they stay alive. Every thread's call converts them to the kernel's parameter types, which
    // gives each thread its own copy of every parameter, as on the GPU.
    using Refs = std::tuple<std::remove_reference_t<A>&...>;
    struct Payload {
      Call call;
      Refs args;
      static void run(const void* p) {
        const Payload& self = *static_cast<const Payload*>(p);
        std::apply(self.call, self.args);
      }
    };
    const Payload payload{call, Refs(a...)};
    detail::ArgCheck ptrs[sizeof...(A) + 1] = {};
    int n = detail::collect_ptrs(payload.args, ptrs, std::index_sequence_for<A...>{});
    detail::launch(site, grid, block, shmem, &Payload::run, &payload, ptrs, n);
  }
};

template <class Call>
KernelLaunch<Call> launch(Call call, const char* name, const char* params, const char* file, int line, dim3 g, dim3 b,
                          size_t shmem = 0, cudaStream_t = nullptr) {
  return KernelLaunch<Call>{call, {name, file, line, params}, g, b, shmem};
}

namespace detail {
// How the Itanium C++ ABI (GCC and Clang on Linux and macOS) passes a by-value parameter of class
// type that has a non-trivial copy/move constructor or destructor: by the address of a temporary
// that the caller owns and destroys. launch_fn uses it to give each thread a bitwise copy of such
// a parameter without running a constructor or destructor in device code, as on a GPU.
template <class P>
constexpr bool by_address() {
  return std::is_class<P>::value && !(std::is_trivially_destructible<P>::value &&
                                      (std::is_trivially_copy_constructible<P>::value || std::is_trivially_move_constructible<P>::value));
}
template <class P>
using abi_param_t = std::conditional_t<by_address<P>(), void*, P>;
template <class P>
struct ParamSlot {  // one thread's copy of one parameter
  alignas(P) unsigned char bytes[sizeof(P)];
};
template <class P>
abi_param_t<P> abi_arg(const P& host, ParamSlot<P>& slot) {
  if constexpr (by_address<P>()) {
    std::memcpy(slot.bytes, static_cast<const void*>(&host), sizeof(P));
    return static_cast<void*>(slot.bytes);
  } else {
    return host;
  }
}
}  // namespace detail

// Translated launch of a kernel that is neither a template nor overloaded:
//   launch_fn(&k, "k", ...)(args)
// The arguments are converted to the kernel's parameter types once, on the host, before the
// launch, and destroyed once after it, as nvcc does; each thread gets its own bitwise copy.
namespace detail {
template <class... P>
struct FnPayload {
  using Vals = std::tuple<std::remove_cv_t<P>...>;
  void (*fn)(P...);
  Vals vals;
  static void run(const void* p) { static_cast<const FnPayload*>(p)->call(std::index_sequence_for<P...>{}); }
  template <size_t... I>
  void call(std::index_sequence<I...>) const {
    std::tuple<ParamSlot<std::remove_cv_t<P>>...> slots;
    // The kernel called as the ABI passes its parameters (through void (*)(), which GCC's
    // -Wcast-function-type accepts as the deliberate cast between function types that this is).
    auto f = reinterpret_cast<void (*)(abi_param_t<std::remove_cv_t<P>>...)>(reinterpret_cast<void (*)()>(fn));
    f(abi_arg(std::get<I>(vals), std::get<I>(slots))...);
    (void)slots;
  }
};
}  // namespace detail

template <class... P>
struct KernelFnLaunch {
  void (*fn)(P...);
  detail::LaunchSite site;
  dim3 grid, block;
  size_t shmem;

  template <class... A>
  void operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "cudasim: a kernel launch passes as many arguments as the kernel has parameters");
    using Payload = detail::FnPayload<P...>;
    const Payload payload{fn, typename Payload::Vals(std::forward<A>(a)...)};
    detail::ArgCheck ptrs[sizeof...(P) + 1] = {};
    int n = detail::collect_ptrs(payload.vals, ptrs, std::index_sequence_for<P...>{});
    detail::launch(site, grid, block, shmem, &Payload::run, &payload, ptrs, n);
  }
};

template <class... P>
KernelFnLaunch<P...> launch_fn(void (*fn)(P...), const char* name, const char* params, const char* file, int line, dim3 g,
                               dim3 b, size_t shmem = 0, cudaStream_t = nullptr) {
  return KernelFnLaunch<P...>{fn, {name, file, line, params}, g, b, shmem};
}

namespace detail {
// cu2cpp.py registers every namespace-scope __device__ and __constant__ variable, so that each
// schedule of a launch starts from the values they had before it, as device memory does.
void register_symbol(void* p, size_t bytes, const char* name, const char* file, int line);
struct SymbolReg {
  // const volatile: a `__device__ int* volatile g` is a device variable like any other.
  SymbolReg(const volatile void* p, size_t bytes, const char* name, const char* file, int line) {
    register_symbol(const_cast<void*>(p), bytes, name, file, line);
  }
};
}  // namespace detail

// `extern __shared__ T name[];` at namespace scope becomes `static cudasim::DynamicShared<T> name{"name"};`
// (inside a function, cu2cpp.py makes it a pointer set from detail::dynamic_shared).
template <class T>
struct DynamicShared {
  const char* name;
  constexpr DynamicShared(const char* n = "dynamic shared memory") : name(n) {}
  operator T*() const { return reinterpret_cast<T*>(detail::dynamic_shared(name, sizeof(T))); }
  // `(float*)smem` and static_cast of a namespace-scope `extern __shared__ char smem[]`.
  template <class U>
  explicit operator U*() const { return reinterpret_cast<U*>(detail::dynamic_shared(name, sizeof(T))); }
};

}  // namespace cudasim

// ---- built-in variables ---------------------------------------------------------------------
#define threadIdx (::cudasim::detail::cur_thread("threadIdx").tid)
#define blockIdx (::cudasim::detail::cur_block("blockIdx").bid)
#define blockDim (::cudasim::detail::cur_block("blockDim").bdim)
#define gridDim (::cudasim::detail::cur_block("gridDim").gdim)
constexpr int warpSize = 32;

// ---- synchronisation ------------------------------------------------------------------------
inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::cudasim::detail::syncthreads(file, line);
}
inline int __syncthreads_count(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return ::cudasim::detail::syncthreads_reduce(0, p, file, line);
}
inline int __syncthreads_and(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return ::cudasim::detail::syncthreads_reduce(1, p, file, line);
}
inline int __syncthreads_or(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return ::cudasim::detail::syncthreads_reduce(2, p, file, line);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Sync, mask, 0, 0, 32, 0, false, file, line);
}
// __threadfence_block() orders the calling thread's accesses for the threads of its block only: a
// release or acquire made with it does not order anything for another block. System scope is the
// device's here (one device, no host threads in a launch).
inline void __threadfence() { ::cudasim::detail::scoped_fence(::cudasim::detail::kScopeDevice); }
inline void __threadfence_block() { ::cudasim::detail::scoped_fence(::cudasim::detail::kScopeBlock); }
inline void __threadfence_system() { ::cudasim::detail::scoped_fence(::cudasim::detail::kScopeSystem); }

// ---- warp intrinsics ------------------------------------------------------------------------
namespace cudasim {
namespace detail {
template <class T>
uint64_t to_bits(T v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "cudasim: warp shuffles take a value of at most 8 bytes (int, unsigned, float, double, long long)");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
template <class T>
T shfl(WarpOp op, unsigned mask, T v, int param, int width, const char* f, int l) {
  return from_bits<T>(warp_collective(op, mask, to_bits(v), param, width, (int)sizeof(T), std::is_signed<T>::value, f, l));
}
}  // namespace detail
}  // namespace cudasim

template <class T>
T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return ::cudasim::detail::shfl(::cudasim::detail::WarpOp::ShflIdx, mask, var, srcLane, width, f, l);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return ::cudasim::detail::shfl(::cudasim::detail::WarpOp::ShflUp, mask, var, (int)delta, width, f, l);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return ::cudasim::detail::shfl(::cudasim::detail::WarpOp::ShflDown, mask, var, (int)delta, width, f, l);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return ::cudasim::detail::shfl(::cudasim::detail::WarpOp::ShflXor, mask, var, laneMask, width, f, l);
}
inline unsigned __ballot_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (unsigned)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Ballot, mask, pred != 0, 0, 32, 4, false, f, l);
}
inline int __any_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Any, mask, pred != 0, 0, 32, 4, false, f, l);
}
inline int __all_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::All, mask, pred != 0, 0, 32, 4, false, f, l);
}
inline int __reduce_add_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceAdd, mask, (uint64_t)(int64_t)v, 0, 32, 4, true, f, l);
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (unsigned)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceAdd, mask, v, 0, 32, 4, false, f, l);
}
inline int __reduce_min_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceMin, mask, (uint64_t)(int64_t)v, 0, 32, 4, true, f, l);
}
inline int __reduce_max_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceMax, mask, (uint64_t)(int64_t)v, 0, 32, 4, true, f, l);
}
// Unsigned keys compare as unsigned (0x80000000 is larger than 1), as in CUDA.
inline unsigned __reduce_min_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (unsigned)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceMin, mask, v, 0, 32, 4, false, f, l);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (unsigned)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::ReduceMax, mask, v, 0, 32, 4, false, f, l);
}
inline unsigned __activemask(const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  // The lanes that reach this call together: the simulator lets every lane of the warp run until
  // it blocks, then gives each lane waiting here the set of lanes waiting here with it. Lanes on
  // the other side of a branch are not in it, as on a GPU.
  return (unsigned)::cudasim::detail::warp_collective(::cudasim::detail::WarpOp::Activemask, 0xffffffffu, 0, 0, 32, 4, false, f, l);
}
// clock() and clock64() in device code count the calling thread's own work, so that a kernel
// that stores them gives the same result under every thread order (cu2cpp.py maps clock()).
namespace cudasim { namespace detail { long long device_clock(); } }
inline long long clock64() { return ::cudasim::detail::device_clock(); }
inline long cudasim_clock() { return (long)::cudasim::detail::device_clock(); }
// The pre-Volta forms assumed lockstep execution and were removed for sm_70 and later; naming one
// stops the build with the replacement to use.
namespace cudasim {
namespace detail {
template <class T>
struct removed : std::false_type {};
}  // namespace detail
}  // namespace cudasim
#define CUDASIM_REMOVED(name, replacement)                                                                      \
  template <class T, class... Rest>                                                                             \
  T name(T v, Rest...) {                                                                                        \
    static_assert(::cudasim::detail::removed<T>::value, #name " was removed in CUDA 9 (it assumed the lanes of a warp " \
                  "run in lockstep, which is not true since Volta): use " replacement);                          \
    return v;                                                                                                   \
  }
CUDASIM_REMOVED(__shfl, "__shfl_sync(0xffffffff, var, srcLane)")
CUDASIM_REMOVED(__shfl_up, "__shfl_up_sync(0xffffffff, var, delta)")
CUDASIM_REMOVED(__shfl_down, "__shfl_down_sync(0xffffffff, var, delta)")
CUDASIM_REMOVED(__shfl_xor, "__shfl_xor_sync(0xffffffff, var, laneMask)")
CUDASIM_REMOVED(__ballot, "__ballot_sync(0xffffffff, predicate)")
CUDASIM_REMOVED(__any, "__any_sync(0xffffffff, predicate)")
CUDASIM_REMOVED(__all, "__all_sync(0xffffffff, predicate)")
#undef CUDASIM_REMOVED

#include "cudasim/device_functions.h"
#include "cudasim/host_api.h"

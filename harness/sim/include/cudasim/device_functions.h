// Device-side functions: atomics, integer intrinsics, math. Atomics are real CPU atomics because
// blocks run concurrently on worker threads.
#pragma once

#include <math.h>  // fmaxf, fminf, sqrtf... in the global namespace, as in CUDA device code

namespace cudasim {
namespace detail {
// CUDA's atomics are relaxed: they order nothing by themselves (a __threadfence() or a
// cuda::atomic_ref with a memory order does). They pass __ATOMIC_RELAXED so that the access
// front end (access.cpp), which performs every atomic sequentially consistent on the CPU, models
// the order the code asked for: a release or acquire order is a fence before or after the atomic.
template <class T>
T atomic_rmw_cas(T* addr, T (*op)(T, T), T val) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic on an unsupported type");
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U* a = reinterpret_cast<U*>(addr);
  U old = __atomic_load_n(a, __ATOMIC_RELAXED);
  for (;;) {
    T o;
    std::memcpy(&o, &old, sizeof(T));
    T n = op(o, val);
    U nb;
    std::memcpy(&nb, &n, sizeof(T));
    if (__atomic_compare_exchange_n(a, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return o;
  }
}
template <class T> T op_add(T a, T b) { return a + b; }
template <class T> T op_min(T a, T b) { return b < a ? b : a; }
template <class T> T op_max(T a, T b) { return a < b ? b : a; }
// Runs f with the scope of its atomics set to `scope` (the access front end reads it).
template <class F>
inline auto with_scope(unsigned char scope, F&& f) -> decltype(f()) {
  set_atomic_scope(scope);
  auto r = f();
  set_atomic_scope(kScopeDevice);
  return r;
}
}  // namespace detail
}  // namespace cudasim

// Integer atomics map to the CPU's atomic instructions; float/double use compare-and-swap loops.
#define CUDASIM_INT_ATOMICS(T)                                                                      \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }              \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }              \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }            \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }              \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }                \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }              \
  inline T atomicMin(T* a, T v) { return ::cudasim::detail::atomic_rmw_cas<T>(a, ::cudasim::detail::op_min<T>, v); } \
  inline T atomicMax(T* a, T v) { return ::cudasim::detail::atomic_rmw_cas<T>(a, ::cudasim::detail::op_max<T>, v); } \
  inline T atomicCAS(T* a, T cmp, T v) {                                                            \
    __atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);             \
    return cmp;                                                                                     \
  }
CUDASIM_INT_ATOMICS(int)
CUDASIM_INT_ATOMICS(unsigned int)
CUDASIM_INT_ATOMICS(unsigned long long int)
CUDASIM_INT_ATOMICS(long long int)
#undef CUDASIM_INT_ATOMICS
inline unsigned short atomicCAS(unsigned short* a, unsigned short cmp, unsigned short v) {
  __atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return cmp;
}

inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
  return ::cudasim::detail::atomic_rmw_cas<unsigned>(a, [](unsigned o, unsigned l) { return o >= l ? 0u : o + 1; }, limit);
}
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
  return ::cudasim::detail::atomic_rmw_cas<unsigned>(a, [](unsigned o, unsigned l) { return (o == 0 || o > l) ? l : o - 1; }, limit);
}
inline float atomicAdd(float* a, float v) { return ::cudasim::detail::atomic_rmw_cas<float>(a, ::cudasim::detail::op_add<float>, v); }
inline double atomicAdd(double* a, double v) { return ::cudasim::detail::atomic_rmw_cas<double>(a, ::cudasim::detail::op_add<double>, v); }
inline float atomicExch(float* a, float v) { return ::cudasim::detail::atomic_rmw_cas<float>(a, [](float, float n) { return n; }, v); }
// CUDA has no float atomicMin/atomicMax; calling one fails to compile, as with nvcc.
float atomicMax(float*, float) = delete;
float atomicMin(float*, float) = delete;

// The scoped forms (atomicAdd_block, atomicAdd_system, ...), for every type the plain form takes:
// the same operation, atomic only among the threads of the block (_block) or of the system
// (_system, the device's here).
#define CUDASIM_SCOPED_ATOMIC(name)                                                                             \
  template <class P, class... A>                                                                                \
  inline auto name##_block(P* p, A... a) -> decltype(name(p, a...)) {                                         \
    return ::cudasim::detail::with_scope(::cudasim::detail::kScopeBlock, [&] { return name(p, a...); });      \
  }                                                                                                             \
  template <class P, class... A>                                                                                \
  inline auto name##_system(P* p, A... a) -> decltype(name(p, a...)) {                                        \
    return ::cudasim::detail::with_scope(::cudasim::detail::kScopeSystem, [&] { return name(p, a...); });     \
  }
CUDASIM_SCOPED_ATOMIC(atomicAdd)
CUDASIM_SCOPED_ATOMIC(atomicSub)
CUDASIM_SCOPED_ATOMIC(atomicExch)
CUDASIM_SCOPED_ATOMIC(atomicMin)
CUDASIM_SCOPED_ATOMIC(atomicMax)
CUDASIM_SCOPED_ATOMIC(atomicInc)
CUDASIM_SCOPED_ATOMIC(atomicDec)
CUDASIM_SCOPED_ATOMIC(atomicCAS)
CUDASIM_SCOPED_ATOMIC(atomicAnd)
CUDASIM_SCOPED_ATOMIC(atomicOr)
CUDASIM_SCOPED_ATOMIC(atomicXor)
#undef CUDASIM_SCOPED_ATOMIC

// ---- integer intrinsics ---------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
// __ldg: a load through the read-only (non-coherent) data cache, which is only for data that no
// thread writes during the launch. The front end marks it so that the checker can report one of
// bytes another block of the launch writes. Every type (CUDA's overloads are the scalar and vector
// types, all trivially copyable); a wide vector is one load.
namespace cudasim {
namespace detail {
// Copies `bytes` from p to out as one read-only-path load (access.cpp, not instrumented: the copy
// is seen once, as that load).
void read_only_load(const void* p, size_t bytes, void* out);
}  // namespace detail
}  // namespace cudasim
template <class T>
T __ldg(const T* p) {
  static_assert(std::is_trivially_copyable<T>::value, "__ldg loads a scalar or vector type");
  T v;
  ::cudasim::detail::read_only_load(p, sizeof(T), &v);
  return v;
}
inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
// 24-bit multiplies: the low 32 bits of the product of the operands' low 24 bits.
inline int __mul24(int a, int b) {
  return (int)(uint32_t)((int64_t)((int32_t)((uint32_t)a << 8) >> 8) * (int64_t)((int32_t)((uint32_t)b << 8) >> 8));
}
inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return (int)(((int64_t)a * (int64_t)b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned)(((uint64_t)a * (uint64_t)b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * (__int128)b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
}
inline unsigned int __sad(int a, int b, unsigned int c) { return c + (unsigned)(a > b ? (long long)a - b : (long long)b - a); }
inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) { return c + (a > b ? a - b : b - a); }
inline int __float2int_rn(float x) { return (int)std::nearbyint(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __float2int_rd(float x) { return (int)std::floor(x); }
inline int __float2int_ru(float x) { return (int)std::ceil(x); }
inline unsigned int __float2uint_rn(float x) { return (unsigned)std::nearbyint(x); }
inline unsigned int __float2uint_rz(float x) { return (unsigned)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline int __double2int_rn(double x) { return (int)std::nearbyint(x); }
inline float __double2float_rn(double x) { return (float)x; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __tanf(float x) { return std::tan(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline void sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline long long __double_as_longlong(double d) { long long x; std::memcpy(&x, &d, 8); return x; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }

// ---- math: CUDA's device overloads of min/max and the float intrinsics ---------------------
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int max(unsigned int a, unsigned int b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float f) { int x; std::memcpy(&x, &f, 4); return x; }
inline unsigned int __float_as_uint(float f) { unsigned x; std::memcpy(&x, &f, 4); return x; }
inline float __uint_as_float(unsigned x) { float f; std::memcpy(&f, &x, 4); return f; }

int cudasim_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// CUDA's built-in variables and qualifiers for sources compiled for the CPU
// (__KERNELC_HOST__) or read by kernelc's frontend (__KERNELC_FRONTEND__).
// Included by kernelc.h; not for direct use.
//
// On the CPU a __global__ kernel runs once per (block, thread), either in
// nested loops (kc::host::RunThreadLoop) or, when it uses block-level
// features (kernelc/block.h), under the block executor (kc::host::RunBlocks);
// both are in kernelc/cpu_exec.h. The indices live in a thread_local, since
// the blocks of a launch run on several OS threads and each OS thread runs
// one block at a time; they are stored as an enum type, which has its own
// alias class, so after the kernel is inlined into the loop the compiler can
// keep them in registers and vectorize the loop even when the kernel writes
// unsigned integers.
#ifndef KERNELC_HOST_H_
#define KERNELC_HOST_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

// libstdc++ spells an attribute `__attribute__((__noinline__))` in
// <memory> (shared_ptr's), which the __noinline__ macro below would turn
// into nonsense: read before the macro exists, its include guard keeps it
// intact when a source includes <memory> (or <regex>, <future>, ...) after
// kernelc.h, as sources built with nvcc do.
#include <memory>
#include <type_traits>

#include "kernelc/half.h"

#if defined(__KERNELC_FRONTEND__)
#define KC_HOST_MARK_(...) __attribute__((annotate(__VA_ARGS__)))
#else
#define KC_HOST_MARK_(...)
#endif

// Qualifiers. A __global__ kernel is inlined into the executor's loop.
// Internal linkage, as `inline` would give it a weak one, keeps kernels of
// the same name in two sources apart; unlike `inline` it is also valid in
// an explicit instantiation definition (`template __global__ void
// reduce<float>(...);`), which declares a template kernel's variant. GCC
// (KERNELC_CXX=g++) has no such attribute: there, `inline`, without which
// always_inline fails on a function that could be interposed.
#if defined(__clang__)
#define KC_GLOBAL_LINKAGE_ __attribute__((internal_linkage))
#else
#define KC_GLOBAL_LINKAGE_ inline
#endif
#define __global__ \
  KC_HOST_MARK_("kc.global") __attribute__((always_inline)) KC_GLOBAL_LINKAGE_
#define __device__ inline
#define __host__
#define __forceinline__ __attribute__((always_inline)) inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __constant__
#define __launch_bounds__(...)
#define __managed__

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
      : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

namespace kc::host {

enum class Index : unsigned int {};
struct Index3 {
  Index x, y, z;
};
struct GridState {
  Index3 thread, block, block_dim, grid_dim;
  // The block executor that runs this OS thread's block (kernelc/cpu_exec.h),
  // or null: what the calls of kernelc/block.h hand it, so that they find
  // it without a lookup of thread-local storage of their own.
  void* executor;
};
inline thread_local GridState grid_state;

// Inlined before any optimization of its own: compiled alone, it returns
// x and y packed into one register, and LLVM 19 merges their two loads into
// one 64-bit load without the alias class, which would then alias every
// store of the kernel and keep the grid loop from vectorizing.
__attribute__((always_inline)) inline dim3 Load(const Index3& i) {
  return dim3(static_cast<unsigned int>(i.x), static_cast<unsigned int>(i.y),
              static_cast<unsigned int>(i.z));
}

}  // namespace kc::host

#define threadIdx (::kc::host::Load(::kc::host::grid_state.thread))
#define blockIdx (::kc::host::Load(::kc::host::grid_state.block))
#define blockDim (::kc::host::Load(::kc::host::grid_state.block_dim))
#define gridDim (::kc::host::Load(::kc::host::grid_state.grid_dim))
#define warpSize 32

// __shared__, barriers and warp intrinsics. The frontend reports their uses
// (the "kc.block_feature" marks), so that such kernels run under the block
// executor.
#include "kernelc/block.h"

// Atomics. The blocks of a launch run concurrently on several OS threads, so
// these are real atomics, relaxed as CUDA's are. The integer operations map
// to the processor's; the others (floating-point sums, the 16-bit floats,
// minima and maxima of any type) are compare-and-swap loops over the bits.
namespace kc::host::detail {

template <typename T>
inline constexpr bool kNativeAtomic = std::is_integral_v<T> &&
                                      (sizeof(T) == 4 || sizeof(T) == 8);

// The operand of an atomic: its type comes from the address alone, as
// CUDA's overloads take it, so that `atomicAdd(&count, 1)` on an unsigned
// counter converts the 1.
template <typename T>
struct Operand {
  using type = T;
};
template <typename T>
using OperandOf = typename Operand<T>::type;

// Replaces *p with f(*p) atomically; returns the old value.
template <typename T, typename F>
inline T AtomicUpdate(T* p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = f(old);
  } while (!__atomic_compare_exchange(p, &old, &desired, false,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}

}  // namespace kc::host::detail

// int, unsigned, unsigned long long, float, double, __half, __nv_bfloat16
// and, below, their pairs and float2/float4.
template <typename T>
inline T atomicAdd(T* p, ::kc::host::detail::OperandOf<T> v) {
  if constexpr (::kc::host::detail::kNativeAtomic<T>) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    return ::kc::host::detail::AtomicUpdate(
        p, [v](T old) { return static_cast<T>(old + v); });
  }
}
template <typename T>
inline T atomicSub(T* p, ::kc::host::detail::OperandOf<T> v) {
  if constexpr (::kc::host::detail::kNativeAtomic<T>) {
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
  } else {
    return ::kc::host::detail::AtomicUpdate(
        p, [v](T old) { return static_cast<T>(old - v); });
  }
}
// Minima and maxima write only when the value changes.
template <typename T>
inline T atomicMax(T* p, ::kc::host::detail::OperandOf<T> v) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  while (old < v &&
         !__atomic_compare_exchange(p, &old, &v, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename T>
inline T atomicMin(T* p, ::kc::host::detail::OperandOf<T> v) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  while (v < old &&
         !__atomic_compare_exchange(p, &old, &v, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename T>
inline T atomicAnd(T* p, ::kc::host::detail::OperandOf<T> v) {
  return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomicOr(T* p, ::kc::host::detail::OperandOf<T> v) {
  return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomicXor(T* p, ::kc::host::detail::OperandOf<T> v) {
  return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomicExch(T* p, ::kc::host::detail::OperandOf<T> v) {
  T old;
  __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
  return old;
}
template <typename T>
inline T atomicCAS(T* p, ::kc::host::detail::OperandOf<T> expected,
                   ::kc::host::detail::OperandOf<T> desired) {
  __atomic_compare_exchange(p, &expected, &desired, false, __ATOMIC_RELAXED,
                            __ATOMIC_RELAXED);
  return expected;
}
// ((old >= v) ? 0 : old + 1) and ((old == 0 || old > v) ? v : old - 1).
inline unsigned atomicInc(unsigned* p, unsigned v) {
  return ::kc::host::detail::AtomicUpdate(
      p, [v](unsigned old) { return old >= v ? 0u : old + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned v) {
  return ::kc::host::detail::AtomicUpdate(
      p, [v](unsigned old) { return (old == 0 || old > v) ? v : old - 1; });
}
// CUDA's scoped forms: a block runs on one OS thread and the system is this
// process, so each is the device-wide atomic.
#define KC_HOST_SCOPED_ATOMIC_(name)        \
  template <typename T, typename... A>      \
  inline auto name##_block(T* p, A... a) {  \
    return name(p, a...);                   \
  }                                         \
  template <typename T, typename... A>      \
  inline auto name##_system(T* p, A... a) { \
    return name(p, a...);                   \
  }
KC_HOST_SCOPED_ATOMIC_(atomicAdd)
KC_HOST_SCOPED_ATOMIC_(atomicSub)
KC_HOST_SCOPED_ATOMIC_(atomicMax)
KC_HOST_SCOPED_ATOMIC_(atomicMin)
KC_HOST_SCOPED_ATOMIC_(atomicAnd)
KC_HOST_SCOPED_ATOMIC_(atomicOr)
KC_HOST_SCOPED_ATOMIC_(atomicXor)
KC_HOST_SCOPED_ATOMIC_(atomicExch)
KC_HOST_SCOPED_ATOMIC_(atomicCAS)
KC_HOST_SCOPED_ATOMIC_(atomicInc)
KC_HOST_SCOPED_ATOMIC_(atomicDec)
#undef KC_HOST_SCOPED_ATOMIC_

// Loads and stores with a cache hint: the CPU has one kind of each.
#define KC_HOST_LOAD_(name)   \
  template <typename T>       \
  inline T name(const T* p) { \
    return *p;                \
  }
KC_HOST_LOAD_(__ldg)
KC_HOST_LOAD_(__ldca)
KC_HOST_LOAD_(__ldcg)
KC_HOST_LOAD_(__ldcs)
KC_HOST_LOAD_(__ldlu)
KC_HOST_LOAD_(__ldcv)
#undef KC_HOST_LOAD_
#define KC_HOST_STORE_(name)    \
  template <typename T>         \
  inline void name(T* p, T v) { \
    *p = v;                     \
  }
KC_HOST_STORE_(__stwb)
KC_HOST_STORE_(__stcg)
KC_HOST_STORE_(__stcs)
KC_HOST_STORE_(__stwt)
#undef KC_HOST_STORE_

// Device math that the C library lacks.
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __saturatef(float x) {
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
inline float __int_as_float(int x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}
inline int __float_as_int(float x) {
  int i;
  memcpy(&i, &x, sizeof i);
  return i;
}

// CUDA's vector types (vector_types.h) with their alignment, and their
// make_ functions.
#define KC_HOST_VECTOR2_(T, N, A) \
  struct alignas(A) N##2 {        \
    T x, y;                       \
  };                              \
  inline N##2 make_##N##2(T x, T y) { return N##2 {x, y}; }
#define KC_HOST_VECTOR4_(T, N, A) \
  struct alignas(A) N##4 {        \
    T x, y, z, w;                 \
  };                              \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4 {x, y, z, w}; }
KC_HOST_VECTOR2_(float, float, 8)
KC_HOST_VECTOR4_(float, float, 16)
KC_HOST_VECTOR2_(double, double, 16)
KC_HOST_VECTOR2_(int, int, 8)
KC_HOST_VECTOR4_(int, int, 16)
KC_HOST_VECTOR2_(unsigned int, uint, 8)
KC_HOST_VECTOR4_(unsigned int, uint, 16)
KC_HOST_VECTOR2_(long long, longlong, 16)
#undef KC_HOST_VECTOR2_
#undef KC_HOST_VECTOR4_

// 16-bit float intrinsics of cuda_fp16.h and cuda_bf16.h, computed in float
// and rounded once to the 16-bit type (fused multiply-adds round through
// float first).
#define KC_HOST_HALF_OPS_(T)                                         \
  inline T __hadd(T a, T b) { return T(float(a) + float(b)); }       \
  inline T __hsub(T a, T b) { return T(float(a) - float(b)); }       \
  inline T __hmul(T a, T b) { return T(float(a) * float(b)); }       \
  inline T __hdiv(T a, T b) { return T(float(a) / float(b)); }       \
  inline T __hneg(T a) { return T(-float(a)); }                      \
  inline T __habs(T a) { return T(fabsf(float(a))); }                \
  inline T __hfma(T a, T b, T c) {                                   \
    return T(fmaf(float(a), float(b), float(c)));                    \
  }                                                                  \
  inline T __hmax(T a, T b) { return T(fmaxf(float(a), float(b))); } \
  inline T __hmin(T a, T b) { return T(fminf(float(a), float(b))); } \
  inline bool __heq(T a, T b) { return float(a) == float(b); }       \
  inline bool __hne(T a, T b) { return float(a) != float(b); }       \
  inline bool __hlt(T a, T b) { return float(a) < float(b); }        \
  inline bool __hle(T a, T b) { return float(a) <= float(b); }       \
  inline bool __hgt(T a, T b) { return float(a) > float(b); }        \
  inline bool __hge(T a, T b) { return float(a) >= float(b); }       \
  inline bool __hisnan(T a) { return isnan(float(a)); }              \
  inline bool __hisinf(T a) { return isinf(float(a)); }
KC_HOST_HALF_OPS_(__half)
KC_HOST_HALF_OPS_(__nv_bfloat16)
#undef KC_HOST_HALF_OPS_

// Pairs of 16-bit floats (half2, __nv_bfloat162) and their conversions.
struct alignas(4) __half2 {
  __half x, y;
};
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
typedef __half2 half2;
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__half(a), __half(b)};
}
inline __half2 __float2half2_rn(float a) {
  return __half2{__half(a), __half(a)};
}
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline __half __low2half(__half2 v) { return v.x; }
inline __half __high2half(__half2 v) { return v.y; }
inline float __low2float(__half2 v) { return float(v.x); }
inline float __high2float(__half2 v) { return float(v.y); }
inline float2 __half22float2(__half2 v) {
  return float2{float(v.x), float(v.y)};
}
inline __half2 __float22half2_rn(float2 v) {
  return __half2{__half(v.x), __half(v.y)};
}
inline __half2 __hadd2(__half2 a, __half2 b) {
  return __half2{__hadd(a.x, b.x), __hadd(a.y, b.y)};
}
inline __half2 __hmul2(__half2 a, __half2 b) {
  return __half2{__hmul(a.x, b.x), __hmul(a.y, b.y)};
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline __nv_bfloat162 __float2bfloat162_rn(float a) {
  return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(a)};
}
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat162{a, b};
}
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
inline float __low2float(__nv_bfloat162 v) { return float(v.x); }
inline float __high2float(__nv_bfloat162 v) { return float(v.y); }
inline float2 __bfloat1622float2(__nv_bfloat162 v) {
  return float2{float(v.x), float(v.y)};
}

// atomicAdd of pairs and vectors: CUDA makes each element's addition atomic,
// not the pair's; these make the whole pair's (the vectors': each element's).
inline __half2 atomicAdd(__half2* p, __half2 v) {
  return ::kc::host::detail::AtomicUpdate(
      p, [v](__half2 old) { return __hadd2(old, v); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
  return ::kc::host::detail::AtomicUpdate(p, [v](__nv_bfloat162 old) {
    return __nv_bfloat162{old.x + v.x, old.y + v.y};
  });
}
inline float2 atomicAdd(float2* p, float2 v) {
  return float2{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)};
}
inline float4 atomicAdd(float4* p, float4 v) {
  return float4{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y),
                atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w)};
}

// Float intrinsics with an explicit rounding mode: round to nearest, as the
// CPU does.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

// Integer intrinsics.
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}
inline unsigned int __brev(unsigned int x) {
  return static_cast<unsigned int>(__brevll(x) >> 32);
}
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<uint64_t>(a) * b) >> 32);
}
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<int64_t>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a,
                                     unsigned long long b) {
  return static_cast<unsigned long long>(
      (static_cast<unsigned __int128>(a) * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}

// CUDA's min and max overloads in the global namespace, the mixed ones
// included (crt/math_functions.hpp): a signed and an unsigned operand
// compare as unsigned, a float and a double as doubles, as there
// (`min(n - 1, i + blockDim.x)` is common).
#define KC_HOST_MINMAX_(R, A, B)                                        \
  inline R min(A a, B b) {                                              \
    return static_cast<R>(b) < static_cast<R>(a) ? static_cast<R>(b)    \
                                                 : static_cast<R>(a);   \
  }                                                                     \
  inline R max(A a, B b) {                                              \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b)    \
                                                 : static_cast<R>(a);   \
  }
#define KC_HOST_MINMAX_SIGNS_(S, U) \
  KC_HOST_MINMAX_(S, S, S)          \
  KC_HOST_MINMAX_(U, U, U)          \
  KC_HOST_MINMAX_(U, S, U)          \
  KC_HOST_MINMAX_(U, U, S)
KC_HOST_MINMAX_SIGNS_(int, unsigned int)
KC_HOST_MINMAX_SIGNS_(long, unsigned long)
KC_HOST_MINMAX_SIGNS_(long long, unsigned long long)
#undef KC_HOST_MINMAX_SIGNS_
#undef KC_HOST_MINMAX_
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }

// Memory fences. The threads of a block run on one OS thread, so ordering
// their accesses only needs the compiler's cooperation; blocks run
// concurrently, so the device- and system-wide fences are the processor's.
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// printf is stdio's (included above, as nvcc includes it): each call writes
// its text under the stream's lock, so blocks running on several threads do
// not mix within one call's output.
// A counter that never goes back, in nanoseconds (CLOCK_MONOTONIC) rather
// than a GPU's cycles: differences of it time code, as on a GPU.
inline long long clock64() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The function that runs a kernel on the CPU. On x86-64 it is compiled
// twice (AVX2/FMA and baseline) and the clone is chosen when the library
// loads. The generated entry point itself is the multiversioned function,
// with external linkage: Clang 19 does not emit the inline functions that
// only a multiversioned function of internal linkage calls (the kernel's
// helpers, dim3's constructor), so a static one fails to link. Clang gives
// the resolver ("<entry>.resolver") default visibility whatever
// -fvisibility says: the library's link keeps it local (a version script),
// so that only the FFI handlers are exported.
#if defined(__x86_64__) && defined(__clang__)
#define KC_HOST_CLONES_ \
  __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KC_HOST_CLONES_
#endif

namespace kc::host {

// Adapts a tensor argument to whatever pointer or view type the kernel
// declares for it (int64_t* vs long long*, kc::In<int64_t, 1> vs
// kc::In<long long, 1>): element types were matched by size and kind when
// the model was built, so the bits are the same.
struct AnyPtr {
  void* p;
  template <typename T>
  operator T*() const {  // NOLINT
    return static_cast<T*>(p);
  }
};

template <int R>
struct AnyView {
  void* data;
  int64_t shape[R > 0 ? R : 1];
  template <template <typename, int> class V, typename T>
  operator V<T, R>() const {  // NOLINT
    V<T, R> v;
    memcpy(&v, this, sizeof v);
    return v;
  }
};

}  // namespace kc::host

#endif  // KERNELC_HOST_H_

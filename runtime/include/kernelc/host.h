// CUDA's built-in variables and qualifiers for sources compiled for the CPU
// grid executor (__KERNELC_HOST__) or read by kernelc's frontend
// (__KERNELC_FRONTEND__). Included by kernelc.h; not for direct use.
//
// The grid executor runs a __global__ kernel once per (block, thread) in
// nested loops on one OS thread. The indices live in a thread_local so that
// concurrent calls on other threads do not interfere; they are stored as an
// enum type, which has its own alias class, so after the kernel is inlined
// into the loop the compiler can keep them in registers and vectorize the
// loop even when the kernel writes unsigned integers.
#ifndef KERNELC_HOST_H_
#define KERNELC_HOST_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernelc/half.h"

#if defined(__KERNELC_FRONTEND__)
#define KC_HOST_MARK_(...) __attribute__((annotate(__VA_ARGS__)))
#else
#define KC_HOST_MARK_(...)
#endif

// Qualifiers. A __global__ kernel is inlined into the executor's loop.
#define __global__ \
  KC_HOST_MARK_("kc.global") __attribute__((always_inline)) inline
#define __device__ inline
#define __host__
#define __forceinline__ __attribute__((always_inline)) inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __constant__
#define __launch_bounds__(...)
#define __managed__
// Block-level features cannot run on the grid executor; the frontend reports
// any use of them in a kernel that targets the CPU.
#define __shared__ KC_HOST_MARK_("kc.block_feature", "__shared__")

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
};
inline thread_local GridState grid_state;

inline dim3 Load(const Index3& i) {
  return dim3(static_cast<unsigned int>(i.x), static_cast<unsigned int>(i.y),
              static_cast<unsigned int>(i.z));
}

}  // namespace kc::host

#define threadIdx (::kc::host::Load(::kc::host::grid_state.thread))
#define blockIdx (::kc::host::Load(::kc::host::grid_state.block))
#define blockDim (::kc::host::Load(::kc::host::grid_state.block_dim))
#define gridDim (::kc::host::Load(::kc::host::grid_state.grid_dim))
#define warpSize 32

// Block-level synchronization and warp intrinsics: declared so that sources
// using them parse, marked so that the frontend can name the feature.
#define KC_BLOCK_FEATURE_(name) KC_HOST_MARK_("kc.block_feature", #name)
KC_BLOCK_FEATURE_(__syncthreads) void __syncthreads();
KC_BLOCK_FEATURE_(__syncthreads_count) int __syncthreads_count(int);
KC_BLOCK_FEATURE_(__syncthreads_and) int __syncthreads_and(int);
KC_BLOCK_FEATURE_(__syncthreads_or) int __syncthreads_or(int);
KC_BLOCK_FEATURE_(__syncwarp) void __syncwarp(unsigned mask = 0xffffffffu);
KC_BLOCK_FEATURE_(__activemask) unsigned __activemask();
KC_BLOCK_FEATURE_(__ballot_sync) unsigned __ballot_sync(unsigned, int);
KC_BLOCK_FEATURE_(__any_sync) int __any_sync(unsigned, int);
KC_BLOCK_FEATURE_(__all_sync) int __all_sync(unsigned, int);
template <typename T>
KC_BLOCK_FEATURE_(__shfl_sync)
T __shfl_sync(unsigned, T, int, int = 32);
template <typename T>
KC_BLOCK_FEATURE_(__shfl_up_sync)
T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <typename T>
KC_BLOCK_FEATURE_(__shfl_down_sync)
T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <typename T>
KC_BLOCK_FEATURE_(__shfl_xor_sync)
T __shfl_xor_sync(unsigned, T, int, int = 32);
#undef KC_BLOCK_FEATURE_

// Atomics. The executor runs one call's threads on one OS thread, but calls
// may run concurrently, so these are real atomics.
template <typename T>
inline T atomicAdd(T* p, T v) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = static_cast<T>(old + v);
  } while (!__atomic_compare_exchange(p, &old, &desired, false,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
template <typename T>
inline T atomicSub(T* p, T v) {
  return atomicAdd(p, static_cast<T>(-v));
}
template <typename T>
inline T atomicMax(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v &&
         !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename T>
inline T atomicMin(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old &&
         !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename T>
inline T atomicExch(T* p, T v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomicCAS(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
  return expected;
}

// Device math that the C library lacks.
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
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
#define KC_HOST_VECTOR2_(T, N, A)                            \
  struct alignas(A) N##2 {                                  \
    T x, y;                                                 \
  };                                                        \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define KC_HOST_VECTOR4_(T, N, A)                                    \
  struct alignas(A) N##4 {                                          \
    T x, y, z, w;                                                   \
  };                                                                \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
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

// The function that runs a kernel on the CPU. On x86-64 it is compiled
// twice (AVX2/FMA and baseline) and the clone is chosen when the library
// loads. Clang 14 gives the dispatcher a name other translation units cannot
// link to, so each one is static and reached through a plain entry point.
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

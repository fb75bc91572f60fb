// kernelc.h: the annotations and tensor views a kernel source uses.
//
// Valid in .cu and .cc files. Three ways a source is compiled:
//  - by kernelc's frontend (__KERNELC_FRONTEND__): annotations become clang
//    `annotate` attributes that the frontend reads; it reads a source either
//    as the CPU sees it (below) or, in Clang's CUDA mode (__CUDA__), against
//    the CUDA toolkit's headers;
//  - for the CPU (__KERNELC_HOST__): CUDA's built-in variables and
//    qualifiers are provided by kernelc/host.h so that __global__ kernels run
//    on the grid executor;
//  - anywhere else (nvcc, NVRTC, a plain C++ compiler): annotations expand to
//    nothing.
#ifndef KERNELC_H_
#define KERNELC_H_

#include <stddef.h>
#include <stdint.h>

#define KERNELC_VERSION_MAJOR 0
#define KERNELC_VERSION_MINOR 1

#if defined(__KERNELC_FRONTEND__)
#define KC_ANNOTATE_(...) __attribute__((annotate(__VA_ARGS__)))
#else
#define KC_ANNOTATE_(...)
#endif

// Parameter roles. `shape` is a string: "n, m", "n * 2", "_", "x" (the same
// shape as tensor parameter x), "" (rank 0).
#define KC_IN(shape) KC_ANNOTATE_("kc.in", shape)
#define KC_INMUT(shape) KC_ANNOTATE_("kc.inmut", shape)
#define KC_OUT(shape) KC_ANNOTATE_("kc.out", shape)
// The shape of a kc::In / kc::InMut / kc::Out view parameter.
#define KC_SHAPE(shape) KC_ANNOTATE_("kc.shape", shape)
// Pre-fills an Out with a constant before the kernel runs.
#define KC_INIT(value) KC_ANNOTATE_("kc.init", value)
// On a scalar parameter: a traced operand (a 0-d array in JAX) instead of a
// static attribute, so a new value does not recompile. The kernel still
// receives a plain scalar. E.g. KC_TRACED float lr.
#define KC_TRACED KC_ANNOTATE_("kc.traced")
// On an input tensor: the Python argument may be None; the kernel then gets
// a null pointer (a view: null data, shape zero). E.g.
// KC_OPTIONAL KC_IN("n") const float* bias.
#define KC_OPTIONAL KC_ANNOTATE_("kc.optional")
// A parameter computed from shapes by the generated handler, e.g.
// KC_DERIVED("x.size") int64_t n. Not an argument of the Python function.
#define KC_DERIVED(expr) KC_ANNOTATE_("kc.derived", expr)

// Launch configuration of a __global__ kernel: total threads along x (and y,
// z), or (KC_BLOCKS) blocks along x (and y, z) as <<<grid, block>>> counts
// them, and threads per block (default 256 / 16x16 / 8x8x4).
#define KC_GRID(...) KC_ANNOTATE_("kc.grid", __VA_ARGS__)
#define KC_BLOCKS(...) KC_ANNOTATE_("kc.blocks", __VA_ARGS__)
#define KC_BLOCK(...) KC_ANNOTATE_("kc.block", __VA_ARGS__)
// Bytes of dynamic shared memory per block (`extern __shared__` arrays) of a
// __global__ kernel on the GPU: an expression, e.g. "256 * 4".
#define KC_SHARED_BYTES(expr) KC_ANNOTATE_("kc.shared_bytes", expr)

// Marks a host function as a kernel: it runs on the CPU once per call with
// whole tensors.
#define KC_KERNEL KC_ANNOTATE_("kc.kernel")

// Batching: every output element depends only on the input elements at the
// same index, and all tensors have one shape. Under jax.vmap the batch is
// then folded into the leading dimension and the kernel runs once on the
// whole batch (one grid launch instead of one per batch element).
#define KC_ELEMENTWISE KC_ANNOTATE_("kc.elementwise")

// Autodiff: names the backward kernel (in the same sources) that computes
// this kernel's vector-Jacobian product. In the backward kernel, a parameter
// named like an input or output of this kernel receives that value (a
// residual), `d_<out>` receives the cotangent of output <out>, and an Out
// named `d_<in>` is the gradient of input <in>.
#define KC_VJP(backward) KC_ANNOTATE_("kc.vjp", backward)

// Forward-mode autodiff (instead of KC_VJP): names the kernel that computes
// this kernel's Jacobian-vector product. In it, a parameter named like an
// input of this kernel receives that value, `d_<in>` the tangent of input
// <in>, and an Out named `d_<out>` is the tangent of output <out>.
#define KC_JVP(tangent) KC_ANNOTATE_("kc.jvp", tangent)

// Sharding: shape symbols along which the kernel's work splits with no
// communication, e.g. KC_PARALLEL("m") for rows that are independent. Inputs
// sharded along such a dimension stay sharded under jax.jit. Each is a whole
// dimension of an input and of every output; each device computes shapes,
// derived values and the grid from its own shard.
#define KC_PARALLEL(...) KC_ANNOTATE_("kc.parallel", __VA_ARGS__)

// Sharding, on an output: KC_SUM("m") says the output is a sum over the
// KC_PARALLEL dimension m, which it does not have (a column sum of rows m).
// Under sharding along m, each device's kernel writes the partial sum of its
// shard, and the op's result is the sum of the partials over the mesh axes
// that shard m (one all-reduce); unsharded, it is the kernel's output.
#define KC_SUM(dim) KC_ANNOTATE_("kc.sum", dim)

#if (defined(__KERNELC_FRONTEND__) && !defined(__CUDA__)) || \
    defined(__KERNELC_HOST__)
#include "kernelc/host.h"
#endif

// NVRTC sees the math macros (M_PI, INFINITY, ...) that the CPU target's
// <math.h> gives kernelc/host.h: kernelc's <math.h> for NVRTC defines them.
#if defined(__CUDACC_RTC__)
#include <math.h>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KC_HOST_DEVICE_ __host__ __device__
#else
#define KC_HOST_DEVICE_
#endif

namespace kc {

namespace detail {

// Row-major offset of an index into a tensor of rank R.
template <int R>
KC_HOST_DEVICE_ inline int64_t Offset(const int64_t* shape,
                                      const int64_t* index) {
  int64_t off = 0;
  for (int d = 0; d < R; ++d) off = off * shape[d] + index[d];
  return off;
}

// The storage of a view; one layout for In, InMut and Out, which the
// generated handler fills. Rank 0 keeps one (unused) shape slot.
template <typename P, int R>
struct ViewData {
  P data;
  int64_t shape[R > 0 ? R : 1];
};

}  // namespace detail

// Tensor views: a data pointer and the logical shape, row-major.
//   a.shape[0], a.size(), a(i, j), a[flat]
template <typename T, int R>
struct In : detail::ViewData<const T*, R> {
  static constexpr int rank = R;
  KC_HOST_DEVICE_ int64_t size() const {
    int64_t n = 1;
    for (int d = 0; d < R; ++d) n *= this->shape[d];
    return n;
  }
  template <typename... I>
  KC_HOST_DEVICE_ const T& operator()(I... i) const {
    static_assert(sizeof...(I) == R, "index count must equal the rank");
    const int64_t index[R > 0 ? R : 1] = {static_cast<int64_t>(i)...};
    return this->data[detail::Offset<R>(this->shape, index)];
  }
  KC_HOST_DEVICE_ const T& operator[](int64_t flat) const {
    return this->data[flat];
  }
};

template <typename T, int R>
struct InMut : detail::ViewData<T*, R> {
  static constexpr int rank = R;
  KC_HOST_DEVICE_ int64_t size() const {
    int64_t n = 1;
    for (int d = 0; d < R; ++d) n *= this->shape[d];
    return n;
  }
  template <typename... I>
  KC_HOST_DEVICE_ T& operator()(I... i) const {
    static_assert(sizeof...(I) == R, "index count must equal the rank");
    const int64_t index[R > 0 ? R : 1] = {static_cast<int64_t>(i)...};
    return this->data[detail::Offset<R>(this->shape, index)];
  }
  KC_HOST_DEVICE_ T& operator[](int64_t flat) const { return this->data[flat]; }
};

template <typename T, int R>
struct Out : InMut<T, R> {};

}  // namespace kc

#endif  // KERNELC_H_

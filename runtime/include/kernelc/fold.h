// The batch fold of a __global__ kernel: under jax.vmap, one launch runs
// the kernel for every batch element, the batch along the grid's z axis.
//
// kernelc compiles a source a second time for this, with its __global__
// kernels made device functions, and adds an entry per kernel whose launch
// grid leaves z free (KC_GRID with one or two dimensions, and no use of
// blockIdx.z or gridDim.z): the entry takes the kernel's own parameters and
// a Batch, moves each tensor parameter to the batch element of blockIdx.z,
// and calls the kernel. The handler launches it with the kernel's grid and
// gridDim.z = the batch size (in chunks of kMaxGridZ), so the kernel runs
// unchanged, once per element, in one launch.
//
// Batch is the one structure both sides see: the generated handler fills it
// (kernelc/cuda.h) and the entry reads it; its layout is checked by the ABI
// layout test. The entry's helpers are device code, for NVRTC, and for the
// CPU grid executor (__KERNELC_HOST__), on which kernelc's tests run fold
// entries where there is no GPU.
#ifndef KERNELC_FOLD_H_
#define KERNELC_FOLD_H_

namespace kc::fold {

// The most batch dimensions (nested vmaps) a folded launch decomposes, and
// the most tensor parameters a folded kernel may have; beyond either, the
// handler launches once per element instead.
constexpr int kMaxRank = 4;
constexpr int kMaxTensors = 24;
// CUDA's limit on gridDim.z: larger batches take several launches.
constexpr long long kMaxGridZ = 65535;

// The batch of one folded launch. Batch element `base + blockIdx.z`, in
// row-major order over `shape`, lives `step[t][d]` bytes further along
// batch dimension d in tensor parameter t (tensor parameters numbered in
// declaration order; a step of 0 broadcasts).
struct Batch {
  long long base;
  long long rank;
  long long shape[kMaxRank];
  long long step[kMaxTensors][kMaxRank];
};

}  // namespace kc::fold

#if defined(__CUDACC_RTC__) || defined(__KERNELC_HOST__)
#include <kernelc.h>

namespace kc::fold {

// The I-th parameter type of a function type (the kernel's, by decltype).
template <int I, typename... A>
struct Nth;
template <typename H, typename... T>
struct Nth<0, H, T...> {
  using type = H;
};
template <int I, typename H, typename... T>
struct Nth<I, H, T...> {
  using type = typename Nth<I - 1, T...>::type;
};
template <typename F, int I>
struct ParamOf;
template <typename... A, int I>
struct ParamOf<void(A...), I> {
  using type = typename Nth<I, A...>::type;
};
template <typename F, int I>
using Param = typename ParamOf<F, I>::type;

// The byte offsets of the first N tensor parameters for this block's
// batch element, into offset[0..N). The batch index is taken apart into
// the batch's dimensions once for them all: a 64-bit division is some
// forty instructions, and a fold program holds one entry per kernel.
template <int N>
__device__ void Offsets(const Batch& b, long long (&offset)[N]) {
  for (int t = 0; t < N; ++t) offset[t] = 0;
  long long z = static_cast<long long>(blockIdx.z) + b.base;
  for (long long d = b.rank - 1; d >= 0; --d) {
    const long long q = z / b.shape[d];
    const long long r = z - q * b.shape[d];
    for (int t = 0; t < N; ++t) offset[t] += r * b.step[t][d];
    z = q;
  }
}

// Moves a tensor parameter (a pointer or a view) by `bytes`.
template <typename T>
__device__ void Shift(T*& p, long long bytes) {
  p = reinterpret_cast<T*>(reinterpret_cast<unsigned long long>(p) + bytes);
}
template <typename T, int R>
__device__ void Shift(In<T, R>& v, long long bytes) {
  Shift(v.data, bytes);
}
template <typename T, int R>
__device__ void Shift(InMut<T, R>& v, long long bytes) {
  Shift(v.data, bytes);
}

}  // namespace kc::fold

#endif  // __CUDACC_RTC__ || __KERNELC_HOST__

#endif  // KERNELC_FOLD_H_

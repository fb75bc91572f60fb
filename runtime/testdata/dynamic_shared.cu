// Dynamic shared memory: each block reverses its part of x (the last block's
// part may be shorter) through an `extern __shared__` array of blockDim.x
// elements (KC_SHARED_BYTES = blockDim.x * sizeof(T)).
#include <kernelc.h>

extern __shared__ double reverse_smem[];

template <typename T>
__global__ void reverse_blocks(const T* x, T* y, int64_t n) {
  T* s = reinterpret_cast<T*>(reverse_smem);
  const int64_t base = blockIdx.x * (int64_t)blockDim.x;
  const int64_t left = n - base;
  const unsigned count = left < blockDim.x ? (unsigned)left : blockDim.x;
  const unsigned t = threadIdx.x;
  if (t < count) s[t] = x[base + t];
  __syncthreads();
  if (t < count) y[base + t] = s[count - 1 - t];
}

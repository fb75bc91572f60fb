// Inclusive prefix sums: within a warp with __shfl_up_sync, and over a
// block from the warps' scans and a scan of the warp totals.
#include <kernelc.h>

template <typename T>
__device__ T warp_inclusive_scan(T v) {
  const unsigned lane = threadIdx.x % 32;
  for (unsigned offset = 1; offset < 32; offset <<= 1) {
    const T up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

// out[i] = x[i] + ... + x[first element of i's warp].
template <typename T>
__global__ void warp_scan(const T* x, int64_t n, T* out) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const T v = warp_inclusive_scan(i < n ? x[i] : T(0));
  if (i < n) out[i] = v;
}

// out[i] = x[i] + ... + x[first element of i's block]. blockDim.x is a
// multiple of 32, at most 1024.
template <typename T>
__global__ void block_scan(const T* x, int64_t n, T* out) {
  __shared__ T totals[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  T v = warp_inclusive_scan(i < n ? x[i] : T(0));
  if (lane == 31) totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const T t = lane < blockDim.x / 32 ? totals[lane] : T(0);
    totals[lane] = warp_inclusive_scan(t);
  }
  __syncthreads();
  if (warp > 0) v += totals[warp - 1];
  if (i < n) out[i] = v;
}

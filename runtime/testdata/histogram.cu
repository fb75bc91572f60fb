// A 256-bin histogram of bytes: each block counts its grid-stride slice in
// shared memory with shared-memory atomics, then adds its counts to the
// global histogram with global atomics.
#include <kernelc.h>

__global__ void histogram256(const unsigned char* data, int64_t n,
                             unsigned int* bins) {
  __shared__ unsigned int local[256];
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}

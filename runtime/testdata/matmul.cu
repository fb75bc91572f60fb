// C = A B for row-major A (m x k) and B (k x n), through TILE x TILE tiles
// of A and B in shared memory; blocks of TILE x TILE threads, one element of
// C each. Sizes need not be multiples of TILE.
#include <kernelc.h>

template <typename T, int TILE>
__global__ void matmul_tiled(const T* a, const T* b, T* c, int m, int n,
                             int k) {
  __shared__ T as[TILE][TILE];
  __shared__ T bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  T acc = 0;
  for (int t0 = 0; t0 < k; t0 += TILE) {
    as[ty][tx] = row < m && t0 + tx < k ? a[row * k + t0 + tx] : T(0);
    bs[ty][tx] = t0 + ty < k && col < n ? b[(t0 + ty) * n + col] : T(0);
    __syncthreads();
    for (int j = 0; j < TILE; ++j) acc += as[ty][j] * bs[j][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

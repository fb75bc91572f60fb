// Matrix transpose through a shared tile, modelled on the coalesced,
// bank-conflict-free transpose of NVIDIA's CUDA samples
// (github.com/NVIDIA/cuda-samples, Samples/6_Performance/transpose/
// transpose.cu; BSD-3-Clause, Copyright NVIDIA Corporation), written anew
// here: blocks of TILE_DIM x BLOCK_ROWS threads move a TILE_DIM x TILE_DIM
// tile, each thread TILE_DIM / BLOCK_ROWS elements, through a tile padded by
// one column. out (cols x rows) = in (rows x cols) transposed; any sizes.
#include <kernelc.h>

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

template <typename T>
__global__ void transpose_tiled(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

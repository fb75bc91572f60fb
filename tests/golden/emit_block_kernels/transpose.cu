// A shared-memory transpose and a column scale: the first runs under the
// CPU's block executor, with its tile in dynamic shared memory declared in a
// namespace; the second, without block-level features, in the plain loop.
#include <kernelc.h>

namespace tiles {

struct Cell {
  float value;
};

__device__ Cell* tile() {
  extern __shared__ Cell tile_smem[];
  return tile_smem;
}

}  // namespace tiles

KC_GRID("cols", "rows")
KC_BLOCK(16, 16)
KC_SHARED_BYTES("16 * 17 * 4")
__global__ void transpose(KC_IN("rows, cols") const float* in,
                          KC_DERIVED("in.shape[0]") int rows,
                          KC_DERIVED("in.shape[1]") int cols,
                          KC_OUT("cols, rows") float* out) {
  tiles::Cell* t = tiles::tile();
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  if (x < cols && y < rows) t[threadIdx.y * 17 + threadIdx.x].value = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * 16 + threadIdx.x;
  y = blockIdx.x * 16 + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = t[threadIdx.x * 17 + threadIdx.y].value;
}

KC_GRID("n")
__global__ void scale(KC_IN("n") const float* x, float a,
                      KC_DERIVED("x.size") int64_t n, KC_OUT("x") float* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}

// matmul: c = a @ b, one thread per output element over a 2-D grid, with
// tensor views that carry their shapes.
#include <kernelc.h>

KC_GRID("c.shape[1]", "c.shape[0]")
KC_BLOCK(16, 16)
__global__ void matmul(KC_SHAPE("m, k") kc::In<float, 2> a,
                       KC_SHAPE("k, n") kc::In<float, 2> b,
                       KC_SHAPE("m, n") kc::Out<float, 2> c) {
  int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (row >= c.shape[0] || col >= c.shape[1]) return;
  float acc = 0.0f;
  for (int64_t i = 0; i < a.shape[1]; ++i) acc += a(row, i) * b(i, col);
  c(row, col) = acc;
}

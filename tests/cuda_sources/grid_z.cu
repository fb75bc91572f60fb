// Which kernels' batches fold into the grid's z axis (kernelc/fold.h): not a
// kernel with a three-dimensional grid, nor one that reads gridDim.z itself.
#include <kernelc.h>

// Folds: a 2-D grid that leaves z alone.
KC_GRID("out.shape[1]", "out.shape[0]")
__global__ void plane(KC_SHAPE("m, n") kc::In<float, 2> x,
                      KC_SHAPE("m, n") kc::Out<float, 2> out) {
  int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (i < out.shape[0] && j < out.shape[1]) out(i, j) = 2.0f * x(i, j);
}

// Does not fold: its grid has a z dimension.
KC_GRID("out.shape[2]", "out.shape[1]", "out.shape[0]")
__global__ void volume(KC_SHAPE("l, m, n") kc::In<float, 3> x,
                       KC_SHAPE("l, m, n") kc::Out<float, 3> out) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t j = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  int64_t i = blockIdx.z * (int64_t)blockDim.z + threadIdx.z;
  if (i < out.shape[0] && j < out.shape[1] && k < out.shape[2])
    out(i, j, k) = x(i, j, k) + 1.0f;
}

// Does not fold: a 2-D grid, but it reads gridDim.z (as 1).
KC_GRID("out.shape[1]", "out.shape[0]")
__global__ void plane_z(KC_SHAPE("m, n") kc::In<float, 2> x,
                        KC_SHAPE("m, n") kc::Out<float, 2> out) {
  int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (i < out.shape[0] && j < out.shape[1])
    out(i, j) = x(i, j) * static_cast<float>(gridDim.z);
}

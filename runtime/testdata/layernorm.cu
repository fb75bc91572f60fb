// Layer normalization, one warp per row, modelled on layernorm_forward
// kernel 3 of llm.c (github.com/karpathy/llm.c, dev/cuda/
// layernorm_forward.cu; MIT License, Copyright (c) 2024 Andrej Karpathy),
// written anew here: a cooperative-groups tile of 32 threads per row,
// cg::reduce for the mean and the variance, then the scaled, shifted
// output; the row's mean and 1/sigma are kept for the backward pass.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

template <typename T>
__global__ void layernorm_rows(const T* x, const T* weight, const T* bias, T* y,
                               T* mean, T* rstd, int rows, int cols, T eps) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= rows) return;
  const T* in = x + (int64_t)row * cols;
  T sum = 0;
  for (int j = warp.thread_rank(); j < cols; j += warp.size()) sum += in[j];
  const T m = cg::reduce(warp, sum, cg::plus<T>()) / cols;
  T sq = 0;
  for (int j = warp.thread_rank(); j < cols; j += warp.size()) {
    const T d = in[j] - m;
    sq += d * d;
  }
  const T s = T(1) / sqrt(cg::reduce(warp, sq, cg::plus<T>()) / cols + eps);
  if (warp.thread_rank() == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
  T* out = y + (int64_t)row * cols;
  for (int j = warp.thread_rank(); j < cols; j += warp.size())
    out[j] = (in[j] - m) * s * weight[j] + bias[j];
}

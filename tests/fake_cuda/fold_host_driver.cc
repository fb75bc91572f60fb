// Runs fold entries (kernelc/fold.h) of the examples' kernels on the CPU:
// their fold programs, as kernelc generated them for NVRTC, compiled with
// kernelc's host definitions of CUDA (-D__KERNELC_HOST__), and a launch
// emulated block by block and thread by thread with gridDim.z spanning the
// batch. Reads the inputs from DIR/<name>.bin and writes the outputs there,
// for tests/python/test_cuda_handlers.py to compare with NumPy.
//
//   fold_host_driver DIR
//
// Built with -DFOLD_POLAR="<.../0_polar.fold.cu>" and
// -DFOLD_MATMUL="<.../0_matmul.fold.cu>".
#include FOLD_POLAR
#include FOLD_MATMUL

#include <stdio.h>

#include <string>
#include <vector>

namespace {

using ::kc::fold::Batch;
using ::kc::host::Index;

// One launch: every block of the grid, every thread of each block.
template <typename Entry, typename... Args>
void Launch(const unsigned grid[3], const unsigned block[2], Entry entry,
            Args... args) {
  ::kc::host::GridState& s = ::kc::host::grid_state;
  s.grid_dim = {Index(grid[0]), Index(grid[1]), Index(grid[2])};
  s.block_dim = {Index(block[0]), Index(block[1]), Index(1)};
  s.thread.z = Index(0);
  for (unsigned bz = 0; bz < grid[2]; ++bz)
    for (unsigned by = 0; by < grid[1]; ++by)
      for (unsigned bx = 0; bx < grid[0]; ++bx)
        for (unsigned ty = 0; ty < block[1]; ++ty)
          for (unsigned tx = 0; tx < block[0]; ++tx) {
            s.block = {Index(bx), Index(by), Index(bz)};
            s.thread.x = Index(tx);
            s.thread.y = Index(ty);
            entry(args...);
          }
}

std::vector<float> Read(const std::string& path, size_t n) {
  std::vector<float> v(n);
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr || fread(v.data(), sizeof(float), n, f) != n) {
    fprintf(stderr, "cannot read %s\n", path.c_str());
    v.clear();
  }
  if (f != nullptr) fclose(f);
  return v;
}

bool Write(const std::string& path, const std::vector<float>& v) {
  FILE* f = fopen(path.c_str(), "wb");
  bool ok = f != nullptr && fwrite(v.data(), sizeof(float), v.size(), f) ==
                                v.size();
  if (f != nullptr) fclose(f);
  return ok;
}

Batch MakeBatch(long long base, std::vector<long long> shape,
                std::vector<std::vector<long long>> steps) {
  Batch b{};
  b.base = base;
  b.rank = static_cast<long long>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    b.shape[d] = shape[d];
    for (size_t t = 0; t < steps.size(); ++t) b.step[t][d] = steps[t][d];
  }
  return b;
}

template <typename View>
View MakeView(float* data, long long rows, long long cols) {
  View v;
  v.data = data;
  v.shape[0] = rows;
  v.shape[1] = cols;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fold_host_driver DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const unsigned flat_block[2] = {256, 1};

  // polar over a batch of (2, 3) elements of 7; y broadcast along the first
  // batch dimension. Twice: in one launch, and in launches of 4 and 2
  // elements (base 0 and 4), as batches longer than gridDim.z allows run.
  {
    std::vector<float> x = Read(dir + "/polar_x.bin", 2 * 3 * 7);
    std::vector<float> y = Read(dir + "/polar_y.bin", 3 * 7);
    if (x.empty() || y.empty()) return 1;
    const long long e = 7 * 4;
    for (int chunked = 0; chunked < 2; ++chunked) {
      std::vector<float> radius(x.size()), angle(x.size());
      const std::vector<std::pair<long long, unsigned>> launches =
          chunked ? std::vector<std::pair<long long, unsigned>>{{0, 4}, {4, 2}}
                  : std::vector<std::pair<long long, unsigned>>{{0, 6}};
      for (const auto& [base, count] : launches) {
        Batch b = MakeBatch(base, {2, 3},
                            {{3 * e, e}, {0, e}, {3 * e, e}, {3 * e, e}});
        const unsigned grid[3] = {1, 1, count};
        Launch(grid, flat_block, kc_fold_polar, x.data(), y.data(),
               static_cast<int64_t>(7), radius.data(), angle.data(), b);
      }
      const std::string suffix = chunked ? "_chunked" : "";
      if (!Write(dir + "/polar_radius" + suffix + ".bin", radius) ||
          !Write(dir + "/polar_angle" + suffix + ".bin", angle))
        return 1;
    }
  }

  // accumulate: total (4, 5) updated in place by delta broadcast (1, 5).
  {
    std::vector<float> total = Read(dir + "/acc_total.bin", 4 * 5);
    std::vector<float> delta = Read(dir + "/acc_delta.bin", 5);
    if (total.empty() || delta.empty()) return 1;
    Batch b = MakeBatch(0, {4}, {{5 * 4}, {0}});
    const unsigned grid[3] = {1, 1, 4};
    Launch(grid, flat_block, kc_fold_accumulate, total.data(), delta.data(),
           static_cast<int64_t>(5), b);
    if (!Write(dir + "/acc_result.bin", total)) return 1;
  }

  // matmul over a batch of (3, 2): a (1, 2, 20, 6) broadcast along the first
  // batch dimension, b (3, 2, 6, 17), c (3, 2, 20, 17); 2x2 blocks of 16x16
  // threads per element.
  {
    std::vector<float> a = Read(dir + "/mm_a.bin", 2 * 20 * 6);
    std::vector<float> bm = Read(dir + "/mm_b.bin", 3 * 2 * 6 * 17);
    if (a.empty() || bm.empty()) return 1;
    std::vector<float> c(3 * 2 * 20 * 17);
    using A = ::kc::fold::Param<decltype(matmul), 0>;
    using C = ::kc::fold::Param<decltype(matmul), 2>;
    Batch b = MakeBatch(0, {3, 2},
                        {{0, 20 * 6 * 4},
                         {2 * 6 * 17 * 4, 6 * 17 * 4},
                         {2 * 20 * 17 * 4, 20 * 17 * 4}});
    const unsigned grid[3] = {2, 2, 6};
    const unsigned block[2] = {16, 16};
    Launch(grid, block, kc_fold_matmul, MakeView<A>(a.data(), 20, 6),
           MakeView<A>(bm.data(), 6, 17), MakeView<C>(c.data(), 20, 17), b);
    if (!Write(dir + "/mm_c.bin", c)) return 1;
  }
  return 0;
}

// histogram: a host kernel with nested loops. The scalar `bins` sizes the
// output, which KC_INIT zero-fills before the kernel adds to it.
#include <kernelc.h>

#include <cmath>

KC_KERNEL void histogram(KC_SHAPE("rows, cols") kc::In<float, 2> values,
                         float lo, float hi, int64_t bins,
                         KC_SHAPE("rows, bins") KC_INIT(0) kc::Out<int32_t, 2> counts) {
  if (bins <= 0 || !(lo < hi)) return;  // nothing can be counted
  const float width = (hi - lo) / static_cast<float>(bins);
  for (int64_t r = 0; r < values.shape[0]; ++r) {
    for (int64_t c = 0; c < values.shape[1]; ++c) {
      float v = values(r, c);
      if (!(v >= lo && v < hi)) continue;  // also skips NaN
      int64_t b = static_cast<int64_t>(std::floor((v - lo) / width));
      if (b >= bins) b = bins - 1;
      counts(r, b) += 1;
    }
  }
}

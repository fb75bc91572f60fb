KC_KERNEL void colsum(KC_SHAPE("r, c") kc::In<float, 2> x,
                      KC_SHAPE("c") KC_INIT(0) kc::Out<float, 1> out) {
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t j = 0; j < x.shape[1]; ++j) out(j) += x(i, j);
}

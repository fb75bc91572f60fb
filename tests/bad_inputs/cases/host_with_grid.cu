#include <kernelc.h>

KC_KERNEL KC_GRID("1")
void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {}

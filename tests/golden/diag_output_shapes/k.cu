#include <kernelc.h>

KC_GRID("n")
__global__ void k(KC_IN("n, 3") const float* x, float scale,
                  KC_OUT("n, _") float* a,
                  KC_OUT("n, scale") float* b,
                  KC_OUT("x.shape[2]") float* c,
                  KC_OUT("n") KC_INIT(-1) uint8_t* d) {}

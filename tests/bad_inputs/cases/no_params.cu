#include <kernelc.h>

KC_GRID("1")
__global__ void k() {}

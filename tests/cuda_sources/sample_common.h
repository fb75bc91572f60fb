// What the sample's kernel and its host code share: a device helper, and a
// host-only error check that prints and exits, as CUDA samples do.
#ifndef SAMPLE_COMMON_H_
#define SAMPLE_COMMON_H_

#include <stdio.h>
#include <stdlib.h>

#define THREADS_PER_BLOCK 256

__device__ inline float axpb(float a, float x, float b) { return a * x + b; }

inline void checkCuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
    exit(EXIT_FAILURE);
  }
}

#endif  // SAMPLE_COMMON_H_

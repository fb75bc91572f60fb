// A whole CUDA sample file, as written for nvcc: the kernel, and host code
// that allocates, copies, launches, checks and prints. kernelc builds it
// with annotations only; its device code uses the math macros M_PI and
// INFINITY, which NVRTC sees as the CPU does.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <kernelc.h>

#include "sample_common.h"

// C[i] = A[i] + B[i] + cos(pi) + 1 (that is, A[i] + B[i]); an infinite
// A[i] gives 0.
KC_BLOCKS("(numElements + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK")
KC_BLOCK("THREADS_PER_BLOCK")
__global__ void vectorAdd(KC_IN("numElements") const float *A,
                          KC_IN("numElements") const float *B,
                          KC_OUT("numElements") float *C,
                          KC_DERIVED("A.size") int numElements) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < numElements) {
    float a = A[i] == INFINITY ? 0.0f : A[i];
    C[i] = axpb(1.0f, a, B[i]) + cosf((float)M_PI) + 1.0f;
  }
}

static void fill(float *p, int n) {
  for (int i = 0; i < n; ++i) p[i] = rand() / (float)RAND_MAX;
}

int main(void) {
  int numElements = 50000;
  size_t size = numElements * sizeof(float);
  printf("[Vector addition of %d elements]\n", numElements);
  float *h_A = (float *)malloc(size);
  float *h_B = (float *)malloc(size);
  float *h_C = (float *)malloc(size);
  fill(h_A, numElements);
  fill(h_B, numElements);
  float *d_A = NULL, *d_B = NULL, *d_C = NULL;
  checkCuda(cudaMalloc((void **)&d_A, size), "cudaMalloc A");
  checkCuda(cudaMalloc((void **)&d_B, size), "cudaMalloc B");
  checkCuda(cudaMalloc((void **)&d_C, size), "cudaMalloc C");
  checkCuda(cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice), "copy A");
  checkCuda(cudaMemcpy(d_B, h_B, size, cudaMemcpyHostToDevice), "copy B");
  int blocksPerGrid = (numElements + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
  vectorAdd<<<blocksPerGrid, THREADS_PER_BLOCK>>>(d_A, d_B, d_C, numElements);
  checkCuda(cudaGetLastError(), "launch");
  checkCuda(cudaMemcpy(h_C, d_C, size, cudaMemcpyDeviceToHost), "copy C");
  for (int i = 0; i < numElements; ++i) {
    if (fabs(h_A[i] + h_B[i] - h_C[i]) > 1e-5) {
      fprintf(stderr, "Result verification failed at element %d!\n", i);
      exit(EXIT_FAILURE);
    }
  }
  printf("Test PASSED\n");
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
  free(h_A);
  free(h_B);
  free(h_C);
  return 0;
}

// Read by kernelc's frontend in Clang's CUDA mode only; see
// texture_fetch_functions.h beside it.

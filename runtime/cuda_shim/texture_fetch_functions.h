// Read by kernelc's frontend in Clang's CUDA mode only. Clang's CUDA runtime
// wrapper includes this header, which CUDA 12 removed together with texture
// references (texture objects, whose functions are in the toolkit's
// texture_indirect_functions.h, remain); kernelc reads kernel signatures and
// never uses texture references, so it stands empty.

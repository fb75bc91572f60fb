// The host-only code of a whole .cu file (its main, the functions that
// allocate and launch, host globals), found in Clang's CUDA mode, which
// parses both sides of a CUDA source: what the kernels' compilation leaves
// out, so that NVRTC and the CPU's compiler see the kernels and what they
// use.
#ifndef KERNELC_COMPILER_FRONTEND_HOST_CODE_H_
#define KERNELC_COMPILER_FRONTEND_HOST_CODE_H_

#include <clang/AST/ASTContext.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kernelc::frontend {

// Bytes [begin, end) of a file.
struct Span {
  unsigned begin = 0;
  unsigned end = 0;
};

// The declarations of the user's files (not system headers) that are host
// code no device code uses, by file (Clang's name for it): function
// definitions and declarations, function templates and variables that are
// neither __global__ nor __device__ (nor __constant__, __shared__), nor
// kernelc kernels, and that no __global__ or __device__ function, no
// kernel, and no device variable refers to, directly or through other such
// declarations. Types, aliases and using-directives stay: they name
// nothing that runs. `ctx` holds a translation unit parsed in Clang's CUDA
// mode, whose attributes tell the two sides apart.
std::map<std::string, std::vector<Span>> HostOnlyCode(clang::ASTContext& ctx);

// `text` with the bytes of `spans` replaced by spaces, line breaks kept, so
// that what remains keeps its lines and columns.
std::string Blank(std::string_view text, const std::vector<Span>& spans);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_HOST_CODE_H_

// The block-level features a kernel uses (__shared__, __syncthreads, warp
// intrinsics, ...): what the cpu target cannot run, and reports.
#ifndef KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_
#define KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_

#include <clang/AST/Decl.h>
#include <clang/Basic/SourceManager.h>

#include <vector>

#include "compiler/model/model.h"

namespace kernelc::frontend {

// The first use of each block-level feature of `kernel`, in source order:
// in its body and, transitively, in the bodies of the functions it calls.
// A feature is read from the "kc.block_feature" mark of kernelc/host.h (as
// the CPU sees a source) or, in CUDA mode, from Clang's own declarations. A
// use inside a system header (CUDA's, read in CUDA mode) is placed where the
// user's code calls into that header: a location of the user's, and never
// a path of the machine's.
std::vector<model::BlockFeature> FindBlockFeatures(
    const clang::FunctionDecl* kernel, const clang::SourceManager& sm);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_

// The block-level features a kernel uses (__shared__, __syncthreads, warp
// intrinsics, cooperative groups, ...), for which the cpu target runs it
// under the block executor, and the `extern __shared__` arrays it reaches,
// which the generated code defines.
#ifndef KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_
#define KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_

#include <clang/AST/Decl.h>
#include <clang/Basic/SourceManager.h>

#include <vector>

#include "compiler/model/model.h"

namespace kernelc::frontend {

struct BlockUse {
  // The first use of each block-level feature, in source order.
  std::vector<model::BlockFeature> features;
  // Sorted, without repeats.
  std::vector<model::ExternShared> extern_shared;
};

// What `kernel` uses of the block, in its body and, transitively, in the
// bodies of the functions it calls. A feature is read from the
// "kc.block_feature" mark of kernelc/host.h and the "kc.grid_sync" mark of
// the cooperative-groups stand-in (as the CPU sees a source) or, in CUDA
// mode, from Clang's own declarations. A use inside a system header (CUDA's
// in CUDA mode, kernelc's cooperative groups as the CPU sees a source) is
// placed where the user's code calls into that header: a location of the
// user's, and never a path of the machine's.
BlockUse FindBlockFeatures(const clang::FunctionDecl* kernel,
                           const clang::SourceManager& sm);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_BLOCK_FEATURES_H_

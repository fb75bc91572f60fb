// The declaration reader: what a translation unit's main file defines of the
// kernels a JSON spec describes (model/declared.h), whether or not they carry
// kernelc's annotations; the spec supplies roles and shapes, and is checked
// against this (sema/source_check.h).
#ifndef KERNELC_COMPILER_FRONTEND_DECLARATIONS_H_
#define KERNELC_COMPILER_FRONTEND_DECLARATIONS_H_

#include <clang/AST/ASTContext.h>

#include <vector>

#include "compiler/model/declared.h"
#include "compiler/model/model.h"

namespace kernelc::frontend {

// For each of `kernels` (the spec's kernels of this source), what the main
// file defines under its name: the signature of a function defined at
// namespace scope in the global namespace (or in an extern "C" block), and,
// for each pointer or view that the spec makes an input, the first write
// through it. `out` is parallel to `kernels`.
void ReadDeclarations(clang::ASTContext& ctx,
                      const std::vector<const model::Kernel*>& kernels,
                      std::vector<model::DeclaredKernel*>& out);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_DECLARATIONS_H_

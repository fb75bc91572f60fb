// Whether a __global__ kernel bounds its threads by a parameter in the one
// form that a target may rely on (model::GridGuard): the canonical global
// index compared with an integer parameter before the kernel does anything
// else. Sema compares the bound with the grid's total; where they are the
// same, the CPU runs only the threads below it.
#ifndef KERNELC_COMPILER_FRONTEND_GRID_GUARD_H_
#define KERNELC_COMPILER_FRONTEND_GRID_GUARD_H_

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include <optional>

#include "compiler/model/model.h"

namespace kernelc::frontend {

// The guard of `kernel`'s body, or none when the body does not have the
// form model::GridGuard describes. Proves the form from the AST; anything
// it does not recognise (a side effect before the guard, a statement after
// `if (i < n) ...`, another index, another comparison, a non-integer or
// narrower-than-32-bit index) is no guard. Recognises the thread built-ins
// as kernelc/host.h defines them and as Clang's CUDA mode does.
std::optional<model::GridGuard> FindGridGuard(
    const clang::FunctionDecl* kernel, clang::ASTContext& ctx);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_GRID_GUARD_H_

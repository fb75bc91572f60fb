// The analysis of one kernel on its own: its parameters, the shapes of its
// tensors, symbol bindings, derived values, checks, output shapes, grid,
// shared memory, KC_INIT values, KC_PARALLEL and KC_ELEMENTWISE. The
// pairing of kernels (KC_VJP, KC_JVP) comes after, over the whole module.
#ifndef KERNELC_COMPILER_SEMA_KERNEL_ANALYZER_H_
#define KERNELC_COMPILER_SEMA_KERNEL_ANALYZER_H_

#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/expr/expr.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// One resolved dimension of a tensor's shape.
struct DimSpec {
  bool any = false;
  expr::NodePtr expr;
  std::string text;
  diag::SourceLoc loc;       // the dimension's first character
  diag::SourceLoc text_loc;  // the shape text's start: node offsets count
                             // from it
  // Copied from another tensor's shape ("same shape as x"): diagnostics
  // about the dimension belong to that tensor.
  bool copied = false;
};

// The resolved shapes of a kernel's parameters.
struct Shapes {
  std::vector<std::vector<DimSpec>> dims;  // per parameter
  std::vector<bool> resolved;  // per parameter: `dims` is its whole shape

  bool Resolved(size_t i) const { return i < resolved.size() && resolved[i]; }
};

// Analyses `k`, reporting its problems to `diags`. The plan refers to `k`,
// which must outlive it.
KernelPlan AnalyzeKernel(const model::Kernel& k, diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_KERNEL_ANALYZER_H_

// KC_PARALLEL: the shape symbols along which a kernel's work splits with no
// communication, checked so that each device's results, computed from its
// shards, are slices of the whole results.
#ifndef KERNELC_COMPILER_SEMA_PARALLEL_H_
#define KERNELC_COMPILER_SEMA_PARALLEL_H_

#include "compiler/diag/engine.h"
#include "compiler/model/model.h"
#include "compiler/sema/kernel_analyzer.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// Checks each name of `k.parallel` against the kernel's resolved `shapes`
// and the plan's derived values, reporting problems at the name; appends
// those that hold to `plan.parallel`.
void AnalyzeParallel(const model::Kernel& k, const Shapes& shapes,
                     KernelPlan& plan, diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_PARALLEL_H_

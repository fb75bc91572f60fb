// KC_VJP and KC_JVP: a kernel paired with the kernel that differentiates
// it, checked parameter by parameter, and recorded in the forward kernel's
// plan (KernelPlan::pairing) for the emitters.
#ifndef KERNELC_COMPILER_SEMA_PAIRING_H_
#define KERNELC_COMPILER_SEMA_PAIRING_H_

#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// Checks the KC_VJP, then the KC_JVP, of every kernel of `plan` against the
// kernel it names, and records each pairing that holds. `clean`: per kernel
// of `plan`, whether its own analysis found no error; shapes are compared
// only between clean kernels.
void AnalyzePairings(ModulePlan& plan, const std::vector<bool>& clean,
                     diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_PAIRING_H_

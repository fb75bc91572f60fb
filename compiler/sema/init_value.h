// KC_INIT: the constant an output is filled with, read by the output's
// dtype.
#ifndef KERNELC_COMPILER_SEMA_INIT_VALUE_H_
#define KERNELC_COMPILER_SEMA_INIT_VALUE_H_

#include <optional>

#include "compiler/diag/engine.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// The value of `p.init` (an Out's KC_INIT): a decimal integer, a decimal
// float, inf, -inf or nan, within the range of p's dtype. Otherwise reports
// why at the value and returns nullopt.
std::optional<InitValue> ParseInit(const model::Param& p,
                                   diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_INIT_VALUE_H_

// Whether a kernel's guard (model::GridGuard) bounds its threads by exactly
// its grid's total, so that a target may run only the threads below the
// bound and leave the guard's test out: every thread past the bound would
// do nothing, and every thread below it is in the grid.
#ifndef KERNELC_COMPILER_SEMA_GRID_GUARD_H_
#define KERNELC_COMPILER_SEMA_GRID_GUARD_H_

#include "compiler/model/model.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// True when `k` has a guard, runs in the plain grid loop (no block-level
// feature), has a one-dimensional grid of threads (KC_GRID) and block, and
// the grid's expression is the guard's bound: the bound parameter itself,
// or the same expression as the bound's derived value, comparing a
// tensor's size through same-shape references ("out.size" where out's
// shape is "x" is "x.size") and derived values through their expressions.
// Reads the grid, derived values and block that `plan` has resolved.
bool GuardBoundsGrid(const model::Kernel& k, const KernelPlan& plan);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_GRID_GUARD_H_

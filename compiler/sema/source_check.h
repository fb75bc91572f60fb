// A JSON spec checked against the C++ source it names. The spec supplies
// what annotations would (roles, shapes, the grid); the source decides the
// types, and an op whose buffers disagree with the kernel's types would read
// or write past them. Every contradiction is an error at the spec's line and
// column, with a note at the C++ declaration.
#ifndef KERNELC_COMPILER_SEMA_SOURCE_CHECK_H_
#define KERNELC_COMPILER_SEMA_SOURCE_CHECK_H_

#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/declared.h"
#include "compiler/model/json_positions.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::sema {

// Where a kernel of a model is in the spec it was read from: that spec's
// places, and the kernel's JSON path there ("$.kernels[0]").
struct SpecPlace {
  const model::JsonPlaces* places = nullptr;
  std::string path;
};

// Checks each kernel of `spec` against `declared` (parallel to
// spec.kernels, as frontend::ReadDeclarations reads it): the source defines
// it, __global__ or not as its kind says, with as many parameters, in order
// and named alike; each pointer or view has the spec's element type and
// access, an output or in-place input points to non-const data, a view has
// the spec's role and rank, a scalar or derived value the spec's type; and
// nothing writes through an input. `where` is parallel to spec.kernels.
// Returns Error::Reported() when it reported an error.
Status CheckAgainstSources(const model::Module& spec,
                           const std::vector<model::DeclaredKernel>& declared,
                           const std::vector<SpecPlace>& where,
                           diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_SOURCE_CHECK_H_

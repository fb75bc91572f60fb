// What the package's functions (__init__.py) and their stubs (__init__.pyi)
// both say about a kernel's function.
#ifndef KERNELC_COMPILER_EMIT_PYTHON_FUNCTION_H_
#define KERNELC_COMPILER_EMIT_PYTHON_FUNCTION_H_

#include <string>
#include <vector>

#include "compiler/sema/sema.h"

namespace kernelc::emit {

// The function's arguments: the In and InMut tensors and the scalars, in
// declaration order, by their Python names.
std::vector<std::string> PyArgs(const model::Kernel& k);

// Its docstring's text, to go between triple quotes in a function body:
// the kernel, each argument's dtype and shape, and the results'.
std::string PyDoc(const sema::KernelPlan& kp);

// The package's public names: each op's function (a template kernel's
// variants are one op), in declaration order.
std::vector<std::string> PyOpNames(const sema::ModulePlan& plan);

// The same as __all__ lists them: quoted, joined by ", ".
std::string PyAll(const sema::ModulePlan& plan);

// The docstring of an op's function: its kernel's, or for a template
// kernel each variant's arguments and results.
std::string PyOpDoc(const sema::ModulePlan& plan, const sema::OpPlan& op);

// The function that runs kernel `k`: the op's for a plain kernel, a
// private one (Namer::PyVariant) for a template's variant.
std::string PyFunction(const model::Kernel& k);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_PYTHON_FUNCTION_H_

// Dependency specifiers (PEP 508), checked as the `packaging` distribution
// parses them (packaging.requirements.Requirement): the name, extras,
// version specifiers or a URL, and an environment marker. A wheel's
// Requires-Dist lines must parse so, or pip refuses the wheel.
#ifndef KERNELC_COMPILER_WHEEL_PEP508_H_
#define KERNELC_COMPILER_WHEEL_PEP508_H_

#include <string_view>

#include "compiler/util/status.h"

namespace kernelc::wheel {

// A user error, saying what was expected where, unless `requirement` is one
// that packaging accepts. Stricter in two ways: only printable ASCII text
// (and tabs), and no backslash in a marker's quoted strings (packaging reads
// those as Python string literals, escapes included).
Status CheckRequirement(std::string_view requirement);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_PEP508_H_

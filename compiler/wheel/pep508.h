// Dependency specifiers (PEP 508), checked as the `packaging` distribution
// parses them (packaging.requirements.Requirement): the name, extras,
// version specifiers or a URL, and an environment marker. A wheel's
// Requires-Dist lines must parse so, or pip refuses the wheel.
#ifndef KERNELC_COMPILER_WHEEL_PEP508_H_
#define KERNELC_COMPILER_WHEEL_PEP508_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kernelc::wheel {

// Why a requirement is not one: where packaging's parser stopped and what
// it expected there; or that the text is not printable ASCII.
struct RequirementError {
  bool not_ascii = false;
  std::string expected;  // "end of dependency specifier", ...
  size_t column = 0;     // 1-based
};

// nullopt when `requirement` is one that packaging accepts, else why not.
// Stricter in two ways: only printable ASCII text (and tabs), and no
// backslash in a marker's quoted strings (packaging reads those as Python
// string literals, escapes included).
std::optional<RequirementError> CheckRequirement(std::string_view requirement);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_PEP508_H_

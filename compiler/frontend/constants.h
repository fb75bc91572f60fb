// Names in annotation expressions that stand for integer constants: the
// object-like macros of the source (KC_GRID("n / BLOCK_SIZE") with
// `#define BLOCK_SIZE (1U << 8)`), whose expansions Clang evaluates as C++
// integer constant expressions, so that they keep the C syntax macros carry
// (literal suffixes, shifts, bitwise operators, casts). Template arguments
// of a template kernel's variants are the other kind of constant; the
// kernel reader takes those from the instantiation.
#ifndef KERNELC_COMPILER_FRONTEND_CONSTANTS_H_
#define KERNELC_COMPILER_FRONTEND_CONSTANTS_H_

#include <clang/Basic/SourceLocation.h>
#include <clang/Lex/Preprocessor.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelc::frontend {

// Evaluates C++ expressions with Clang, each as the initializer of a
// constexpr variable in a translation unit of their own that sees only
// <stddef.h> and <stdint.h>: the value of each that is an integer constant
// expression within int64, else nullopt.
using ConstantEvaluator = std::function<std::vector<std::optional<int64_t>>(
    const std::vector<std::string>& expressions)>;

// An identifier of an annotation expression that may name a constant, and
// its byte offset in the text.
struct NameUse {
  std::string name;
  int offset = 0;
};

// The identifiers of `text` that may name constants, in text order: not a
// member after '.' (size, shape, rank), not one of the expression
// language's functions before '(' (ceil_div, min, max), not "_".
std::vector<NameUse> ConstantCandidates(std::string_view text);

// The text of object-like macro `name` as defined at `loc`, its macros
// expanded (each token's spelling, separated by spaces); nullopt when
// `name` is no object-like macro there, or when its expansion invokes a
// function-like macro, which only a full preprocessor expands.
std::optional<std::string> ExpandObjectMacro(clang::Preprocessor& pp,
                                             llvm::StringRef name,
                                             clang::SourceLocation loc);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_CONSTANTS_H_

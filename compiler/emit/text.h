// Text that several generators put into what they emit.
#ifndef KERNELC_COMPILER_EMIT_TEXT_H_
#define KERNELC_COMPILER_EMIT_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace kernelc::emit {

// A C++ or Python string literal of `s` (EscapeForLiteral, util/quote.h):
// printable ASCII as it is (names, expression texts), '"' and '\\'
// escaped, anything else as an octal escape.
std::string Quote(std::string_view s);

// The body of Quote(s), without the quotes; also what a user's text (a
// source's path) is in a generated comment or docstring.
std::string Escape(std::string_view s);

// The parameters of a function declaration, one per line after the open
// parenthesis (four spaces in): "\n    a,\n    b"; empty for none.
std::string ParamLines(const std::vector<std::string>& params);

// A Python tuple of `items`: "(a,)", "(a, b)", "()".
std::string PyTuple(const std::vector<std::string>& items);

// A file name's stem, as generated files' names carry it: "saxpy" for
// "dir/saxpy.cu"; characters other than ASCII letters, digits, '_' and '-'
// become '_'.
std::string Stem(std::string_view path);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_TEXT_H_

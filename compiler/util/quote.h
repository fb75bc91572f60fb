// One spelling of arbitrary bytes inside C++ and Python string literals, and
// in #line directives: what kernelc writes wherever a user's text (a path, a
// name) enters code it generates or hands to a compiler.
#ifndef KERNELC_COMPILER_UTIL_QUOTE_H_
#define KERNELC_COMPILER_UTIL_QUOTE_H_

#include <string>
#include <string_view>

namespace kernelc {

// The body of a string literal that means `s` in C++ (also after #line) and
// in Python: printable ASCII as it is, '"' and '\\' escaped, every other
// byte as a three-digit octal escape (\012), which, unlike \x, never takes a
// following digit into it. The result has no newline, so it cannot end a
// // or # comment early either (a C++ comment must still not end with it:
// a backslash there would join the next line).
std::string EscapeForLiteral(std::string_view s);

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_QUOTE_H_

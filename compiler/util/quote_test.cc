#include "compiler/util/quote.h"

#include <catch2/catch.hpp>
#include <string>

namespace kernelc {
namespace {

TEST_CASE("Every byte has one spelling in a string literal") {
  CHECK(EscapeForLiteral("dir/saxpy.cu") == "dir/saxpy.cu");
  CHECK(EscapeForLiteral("a\"b\\c") == "a\\\"b\\\\c");
  // Octal takes exactly three digits: a digit after it stays a digit.
  CHECK(EscapeForLiteral("a\nb1\t7") == "a\\012b1\\0117");
  CHECK(EscapeForLiteral(std::string("\0\x7f\xff", 3)) == "\\000\\177\\377");
  CHECK(EscapeForLiteral("trailing\\") == "trailing\\\\");
}

}  // namespace
}  // namespace kernelc

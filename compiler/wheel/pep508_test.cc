#include "compiler/wheel/pep508.h"

#include <catch2/catch.hpp>
#include <tuple>

namespace kernelc::wheel {
namespace {

TEST_CASE("CheckRequirement accepts PEP 508 requirements") {
  for (const char* text : {
           "scipy",
           "scipy>=1.11",
           "scipy >= 1.11, < 2",
           "scipy (>=1.11,<2)",
           "requests[security,socks]==2.*",
           "foo===anything-goes",
           "foo~=1.4.2",
           "foo>=1,",
           "foo @ https://example.com/foo-1.0.whl",
           "foo @ file:///tmp/foo.whl ; python_version >= '3.11'",
           "cupy-cuda12x; sys_platform == \"linux\" and "
           "platform_machine == 'x86_64'",
           "bar; (os_name == 'posix' or os.name == 'nt') and extra == 'gpu'",
           "bar; 'linux' in sys_platform",
           "bar; python_full_version not in '3.11.0, 3.11.1'",
           "\tbaz == 1.0+local.7 ",
       }) {
    INFO(text);
    std::optional<RequirementError> e = CheckRequirement(text);
    INFO((e ? e->expected : std::string()));
    REQUIRE(!e);
  }
}

TEST_CASE("CheckRequirement says what it expected where") {
  const std::tuple<const char*, const char*, size_t> cases[] = {
      {"", "package name at the start of dependency specifier", 1},
      {">=1.0", "package name at the start of dependency specifier", 1},
      {"foo bar", "semicolon (after name with no version specifier) or end", 5},
      {"foo>=1.0 bar",
       "comma (within version specifier), semicolon (after version specifier) "
       "or end",
       10},
      {"foo[a b]", "comma between extra names", 7},
      {"foo[a", "matching ] for [, after extras", 6},
      {"foo>=1.*", "no .* suffix: only == and != take one", 7},
      {"foo==1.0a1.*",
       "no .* suffix after a pre-release, post-release, dev or local version",
       11},
      {"foo>=1.0+local", "no local version label: only == and != take one", 9},
      {"foo; os_name",
       "a marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, not in",
       13},
      {"foo; color == 'red'", "a marker variable or quoted string", 6},
      {"foo; os_name == 'a\\x'", "a quoted string without backslashes", 17},
  };
  for (const auto& [text, expected, column] : cases) {
    INFO(text);
    std::optional<RequirementError> e = CheckRequirement(text);
    REQUIRE(e);
    CHECK(!e->not_ascii);
    CHECK(e->expected == expected);
    CHECK(e->column == column);
  }
  std::optional<RequirementError> e = CheckRequirement("foo\nName: bar");
  REQUIRE(e);
  CHECK(e->not_ascii);
}

}  // namespace
}  // namespace kernelc::wheel

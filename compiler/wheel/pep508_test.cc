#include "compiler/wheel/pep508.h"

#include <llvm/ADT/StringRef.h>

#include <catch2/catch.hpp>

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
    Status s = CheckRequirement(text);
    INFO((s.ok() ? std::string() : s.error().message));
    REQUIRE(s.ok());
  }
}

TEST_CASE("CheckRequirement says what it expected where") {
  const std::pair<const char*, const char*> cases[] = {
      {"",
       "expected package name at the start of dependency specifier at "
       "column 1"},
      {">=1.0",
       "expected package name at the start of dependency specifier "
       "at column 1"},
      {"foo bar",
       "expected semicolon (after name with no version specifier) "
       "or end at column 5"},
      {"foo>=1.0 bar",
       "expected comma (within version specifier), semicolon "
       "(after version specifier) or end at column 10"},
      {"foo[a b]", "expected comma between extra names at column 7"},
      {"foo[a", "expected matching ] for [, after extras at column 6"},
      {"foo>=1.*",
       "expected no .* suffix: only == and != take one at column "
       "7"},
      {"foo==1.0a1.*",
       "expected no .* suffix after a pre-release, "
       "post-release, dev or local version at column 11"},
      {"foo>=1.0+local",
       "expected no local version label: only == and != "
       "take one at column 9"},
      {"foo; os_name",
       "expected a marker operator, one of <=, <, !=, ==, "
       ">=, >, ~=, ===, in, not in at column 13"},
      {"foo; color == 'red'",
       "expected a marker variable or quoted string "
       "at column 6"},
      {"foo; os_name == 'a\\x'",
       "expected a quoted string without "
       "backslashes at column 17"},
  };
  for (const auto& [text, error] : cases) {
    INFO(text);
    Status s = CheckRequirement(text);
    REQUIRE(!s.ok());
    REQUIRE(llvm::StringRef(s.error().message)
                .ends_with(std::string("'): ") + error));
  }
  Status s = CheckRequirement("foo\nName: bar");
  REQUIRE(s.error().message ==
          "'foo\nName: bar' is not a valid requirement (PEP 508, e.g. "
          "'scipy>=1.11' or 'cupy-cuda12x; sys_platform == \"linux\"'): only "
          "printable ASCII text");
}

}  // namespace
}  // namespace kernelc::wheel

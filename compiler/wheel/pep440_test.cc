#include "compiler/wheel/pep440.h"

#include <catch2/catch.hpp>

namespace kernelc::wheel {
namespace {

std::string Normal(std::string_view text) {
  std::optional<Version> v = ParseVersion(text);
  return v ? v->Normalized() : "<invalid>";
}

TEST_CASE("ParseVersion normalises as packaging does") {
  // Each pair was checked with str(packaging.version.Version(text)); the
  // Python tests compare many more generated ones.
  const std::pair<const char*, const char*> cases[] = {
      {"1.2.0", "1.2.0"},
      {"v1", "1"},
      {"V1.0", "1.0"},
      {"1.0.0-dev", "1.0.0.dev0"},
      {"01.002.0030", "1.2.30"},
      {"0!1.0", "1.0"},
      {"007!1.0", "7!1.0"},
      {"1.0RC1", "1.0rc1"},
      {"1.0alpha", "1.0a0"},
      {"1.0-beta.2", "1.0b2"},
      {"1.0c1", "1.0rc1"},
      {"1.0preview_3", "1.0rc3"},
      {"1.0pre", "1.0rc0"},
      {"1.2-beta", "1.2b0"},
      {"1.0a.", "1.0a0"},
      {"1.0-1", "1.0.post1"},
      {"1.0.rev", "1.0.post0"},
      {"1.0r5", "1.0.post5"},
      {"1.0-r-1", "1.0.post1"},
      {"1.0_post_3.dev-4", "1.0.post3.dev4"},
      {"1.0.post.dev", "1.0.post0.dev0"},
      {"1.0a1-1.dev2", "1.0a1.post1.dev2"},
      {"1.0+Ubuntu-1.007", "1.0+ubuntu.1.7"},
      {"1.0+abc_DEF.000", "1.0+abc.def.0"},
      {" \t1.0\n\x1c", "1.0"},
      {"1!2.3.4rc5.post6.dev7+local.8", "1!2.3.4rc5.post6.dev7+local.8"},
      {"123456789012345678901234567890.0", "123456789012345678901234567890.0"},
  };
  for (const auto& [text, normal] : cases) {
    INFO(text);
    REQUIRE(Normal(text) == normal);
  }
}

TEST_CASE("ParseVersion rejects what packaging rejects") {
  for (const char* text : {"",
                           " ",
                           "v",
                           "1.",
                           ".1",
                           "1..0",
                           "1.0-",
                           "1.0+",
                           "1.0+a.",
                           "1.0+.a",
                           "1_0",
                           "1.0-x",
                           "1.0 beta",
                           "latest",
                           "1.0a1a2",
                           "1.0.post1-1",
                           "1.0.devx",
                           "1!",
                           "!1.0",
                           "1.0+a+b",
                           "1.*",
                           "1.0\xc3\xa4",
                           "1.0+\xe2\x84\xaa"}) {
    INFO(text);
    REQUIRE(!ParseVersion(text));
  }
}

}  // namespace
}  // namespace kernelc::wheel

#include "compiler/diag/catalogue.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <set>
#include <string>

#include "compiler/diag/engine.h"

namespace kernelc::diag {
namespace {

TEST_CASE("CountFields counts {} and refuses other braces") {
  CHECK(CountFields("") == 0);
  CHECK(CountFields("no fields") == 0);
  CHECK(CountFields("'{}' and '{}'") == 2);
  CHECK(CountFields("{{}} is {}") == 1);
  CHECK(CountFields("{0}") == -1);
  CHECK(CountFields("{:d}") == -1);
  CHECK(CountFields("a } b") == -1);
  CHECK(CountFields("a {") == -1);
}

TEST_CASE("every catalogue entry has a unique identifier and a format") {
  std::set<std::string_view> names;
  for (const Message& m : kCatalogue) {
    INFO(m.name);
    CHECK(names.insert(m.name).second);
    REQUIRE_FALSE(m.name.empty());
    CHECK(std::isupper(static_cast<unsigned char>(m.name[0])));
    CHECK(CountFields(m.format) >= 0);
    CHECK_FALSE(m.format.empty());
  }
  CHECK(MessageOf(Id::kNoSuchFile).name == "NoSuchFile");
  CHECK(MessageOf(Id::kKernelFirstDefinedHere).severity == Severity::kNote);
  CHECK(MessageOf(Id::kCacheNotWritten).severity == Severity::kWarning);
}

TEST_CASE("Make fills the catalogue's format") {
  Diagnostic d = Make<Id::kOptionNeedsTarget>({}, "--lineinfo", "cuda");
  CHECK(d.id == Id::kOptionNeedsTarget);
  CHECK(d.severity == Severity::kError);
  CHECK(d.message == "--lineinfo needs the cuda target");
  Diagnostic n = Make<Id::kBlockFeatureUsedHere>({"k.cu", 3, 5}, "__shared__");
  CHECK(n.severity == Severity::kNote);
  CHECK(n.loc == SourceLoc{"k.cu", 3, 5});
  CHECK(n.message == "__shared__ used here");
}

TEST_CASE("the catalogue's text: one entry a line, line breaks escaped") {
  std::string text = CatalogueText();
  CHECK(text.find("NoSuchFile: error: no such file: '{}'\n") !=
        std::string::npos);
  CHECK(text.find("CacheNotWritten: warning: {} (build not cached)\n") !=
        std::string::npos);
  CHECK(text.find("HostCompileFailed: error: compiling {} for the CPU "
                  "failed:\\n{}\n") != std::string::npos);
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  CHECK(lines == std::size(kCatalogue));
}

}  // namespace
}  // namespace kernelc::diag

#include "compiler/diag/engine.h"

#include <catch2/catch.hpp>
#include <string>

#include "compiler/diag/diag_test_util.h"

namespace kernelc::diag {
namespace {

using testing::At;
using testing::FileMap;

TEST_CASE("the engine counts errors and warnings, not notes") {
  DiagnosticEngine e;
  CHECK_FALSE(e.has_errors());
  e.Report<Id::kCacheNotWritten>({}, "cannot create the build cache");
  e.Add(At(Severity::kError, {"k.cu", 1, 1}, "expected ';'"));
  e.Report<Id::kKernelFirstDefinedHere>({"k.cu", 2, 1}, "k");
  e.Add(At(Severity::kFatal, {"k.cu", 3, 10}, "'x.h' file not found"));
  CHECK(e.error_count() == 2);
  CHECK(e.warning_count() == 1);
  CHECK(e.has_errors());
  CHECK(e.diagnostics().size() == 4);
}

TEST_CASE("a repeated diagnostic is dropped, with its notes") {
  DiagnosticEngine e;
  for (int i = 0; i < 2; ++i) {
    e.Add(At(Severity::kError, {"lib.h", 4, 2}, "unknown type 'T'"));
    e.Add(At(Severity::kNote, {"lib.h", 1, 1}, "declared here"));
  }
  // The same message elsewhere, or as a warning, is another diagnostic.
  e.Add(At(Severity::kError, {"lib.h", 5, 2}, "unknown type 'T'"));
  e.Add(At(Severity::kNote, {"lib.h", 1, 1}, "declared here"));
  e.Add(At(Severity::kWarning, {"lib.h", 4, 2}, "unknown type 'T'"));
  REQUIRE(e.diagnostics().size() == 5);
  CHECK(e.error_count() == 2);
  CHECK(e.diagnostics()[2].loc.line == 5);
  CHECK(e.diagnostics()[3].severity == Severity::kNote);
}

TEST_CASE("HasErrorIn: errors in a half-open range of one file") {
  DiagnosticEngine e;
  e.Add(At(Severity::kError, {"a.cu", 4, 25}, "use of undeclared 'm'"));
  e.Add(At(Severity::kWarning, {"a.cu", 9, 1}, "unused"));
  CHECK(e.HasErrorIn({{"a.cu", 4, 1}, {"a.cu", 5, 1}}));
  CHECK(e.HasErrorIn({{"a.cu", 4, 25}, {"a.cu", 4, 26}}));
  CHECK_FALSE(e.HasErrorIn({{"a.cu", 4, 26}, {"a.cu", 9, 2}}));
  CHECK_FALSE(e.HasErrorIn({{"a.cu", 1, 1}, {"a.cu", 4, 25}}));
  CHECK_FALSE(e.HasErrorIn({{"b.cu", 1, 1}, {"b.cu", 99, 1}}));
}

TEST_CASE("the summary counts errors when they are about the input's files") {
  DiagnosticEngine none;
  none.Report<Id::kCacheNotWritten>({}, "x");
  CHECK(none.Summary().empty());

  DiagnosticEngine invocation;
  invocation.Report<Id::kNoTarget>({});
  CHECK(invocation.Summary().empty());
  CHECK(invocation.Render() ==
        "kernelc: error: no target: build for cpu, cuda or both\n");

  DiagnosticEngine spec;
  spec.Report<Id::kSpecFieldMissing>({"spec.json"}, "$.kernels");
  CHECK(spec.Summary() == "1 error generated.\n");
  spec.Report<Id::kSpecExpectedObject>({"spec.json"}, "$.kernels[0]");
  CHECK(spec.Render() ==
        "spec.json: error: $.kernels: missing\n"
        "spec.json: error: $.kernels[0]: expected an object\n"
        "2 errors generated.\n");
}

TEST_CASE("Render reads source lines through the engine's reader") {
  DiagnosticEngine e(FileMap({{"k.cu", "int a;\nfloat* x = 0;\n"}}));
  e.Report<Id::kPointerNeedsRole>({"k.cu", 2, 8}, "x", "k");
  e.Report<Id::kNoSuchFile>({}, "gone.cu");
  CHECK(e.Render() ==
        "k.cu:2:8: error: pointer parameter 'x' of kernel 'k' needs a role: "
        "KC_IN, KC_INMUT or KC_OUT\n"
        "float* x = 0;\n"
        "       ^\n"
        "kernelc: error: no such file: 'gone.cu'\n"
        "2 errors generated.\n");
}

TEST_CASE("quoted lines are shown for their file, which is never read") {
  DiagnosticEngine e([](const std::string& file) -> std::optional<std::string> {
    FAIL("read " << file);
    return std::nullopt;
  });
  e.AddQuotedLines("k.py", Excerpt{11, {"@op(grid=\"n +\")", "def k(x):"}});
  e.Add(At(Severity::kError, {"k.py", 11, 14}, "expected an expression"));
  e.Add(At(Severity::kError, {"k.py", 3, 1}, "outside the quoted lines"));
  CHECK(e.Render() ==
        "k.py:11:14: error: expected an expression\n"
        "@op(grid=\"n +\")\n"
        "             ^\n"
        "k.py:3:1: error: outside the quoted lines\n"
        "2 errors generated.\n");
}

}  // namespace
}  // namespace kernelc::diag

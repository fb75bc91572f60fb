#include "compiler/backends/nvrtc_backend.h"

#include <catch2/catch.hpp>

namespace kernelc::backends {
namespace {

TEST_CASE("NVRTC errors become diagnostics at the user's line and column") {
  diag::DiagnosticSink diags;
  const std::string log =
      "k.cu(7): error: identifier \"undefined_thing\" is undefined\n"
      "    out[i] = undefined_thing(x[i]);\n"
      "             ^\n"
      "\n"
      "dir/k.cu(12): warning #177-D: variable \"v\" was declared but never "
      "referenced\n"
      "    int v;\n"
      "        ^\n"
      "\n"
      "2 errors detected in the compilation of \"k.cu\".";
  REQUIRE(ParseNvrtcLog(log, diags));
  REQUIRE(diags.diagnostics().size() == 2);
  const diag::Diagnostic& d = diags.diagnostics()[0];
  CHECK(d.severity == diag::Severity::kError);
  CHECK(d.loc.file == "k.cu");
  CHECK(d.loc.line == 7);
  CHECK(d.loc.col == 12);
  CHECK(d.message == "identifier \"undefined_thing\" is undefined");
  const diag::Diagnostic& w = diags.diagnostics()[1];
  CHECK(w.severity == diag::Severity::kWarning);
  CHECK(w.loc.file == "dir/k.cu");
  CHECK(w.loc.line == 12);
  CHECK(w.loc.col == 7);  // NVRTC indents the source line by two
  CHECK(w.message == "variable \"v\" was declared but never referenced");
}

TEST_CASE("NVRTC warnings and catastrophic errors") {
  diag::DiagnosticSink diags;
  const std::string log =
      "a.cu(3): warning: something odd\n"
      "a.cu(1): catastrophic error: cannot open source file \"x.h\"\n"
      "  #include \"x.h\"\n"
      "                ^\n";
  REQUIRE(ParseNvrtcLog(log, diags));
  REQUIRE(diags.diagnostics().size() == 2);
  CHECK(diags.diagnostics()[0].severity == diag::Severity::kWarning);
  CHECK(diags.diagnostics()[0].loc.col == 1);  // no caret line under it
  CHECK(diags.diagnostics()[1].severity == diag::Severity::kError);
  CHECK(diags.diagnostics()[1].loc.line == 1);
  CHECK(diags.diagnostics()[1].loc.col == 15);
  CHECK(diags.error_count() == 1);
}

TEST_CASE("A log without located messages is not parsed") {
  diag::DiagnosticSink diags;
  CHECK_FALSE(
      ParseNvrtcLog("nvrtc: error: invalid value for --gpu-name\n", diags));
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("NVRTC flags per architecture") {
  CudaBuild b;
  b.fast_math = true;
  b.defines = {"N=4"};
  CHECK(NvrtcFlags(b, 90) ==
        std::vector<std::string>{"--gpu-architecture=sm_90", "-std=c++17",
                                 "-default-device", "--use_fast_math",
                                 "-DN=4"});
}

}  // namespace
}  // namespace kernelc::backends

#include "compiler/backends/nvrtc_backend.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>

namespace kernelc::backends {
namespace {

TEST_CASE("NVRTC errors become diagnostics at the user's line and column") {
  diag::DiagnosticEngine diags;
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
  diag::DiagnosticEngine diags;
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
  diag::DiagnosticEngine diags;
  CHECK_FALSE(
      ParseNvrtcLog("nvrtc: error: invalid value for --gpu-name\n", diags));
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("NVRTC flags per architecture") {
  CudaBuild b;
  b.fast_math = true;
  b.lineinfo = true;
  b.defines = {"N=4"};
  CHECK(NvrtcFlags(b, 90) ==
        std::vector<std::string>{"--gpu-architecture=sm_90", "-std=c++17",
                                 "-default-device", "--use_fast_math",
                                 "--generate-line-info", "-DN=4"});
}

TEST_CASE("LocateNvrtc finds the library without loading it") {
  llvm::SmallString<128> root;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("kernelc-nvrtc-test", root));
  std::string home(root);
  REQUIRE(!llvm::sys::fs::create_directories(home + "/lib64"));
  REQUIRE(!llvm::sys::fs::create_directories(home + "/include"));
  // Not a library at all: loading it would fail.
  std::ofstream(home + "/lib64/libnvrtc.so.13") << "not a library";
  const char* old = getenv("CUDA_HOME");
  std::string saved = old ? old : "";
  setenv("CUDA_HOME", home.c_str(), 1);
  std::optional<NvrtcLocation> bare = LocateNvrtc();
  std::ofstream(home + "/include/cuda_fp16.h") << "// fp16\n";
  std::optional<NvrtcLocation> with_headers = LocateNvrtc();
  if (old)
    setenv("CUDA_HOME", saved.c_str(), 1);
  else
    unsetenv("CUDA_HOME");
  llvm::sys::fs::remove_directories(home);
  REQUIRE(bare.has_value());
  CHECK(bare->library == home + "/lib64/libnvrtc.so.13");
  CHECK(bare->cuda_include.empty());
  REQUIRE(with_headers.has_value());
  CHECK(with_headers->cuda_include == home + "/include");
}

}  // namespace
}  // namespace kernelc::backends

namespace kernelc::backends {
namespace {

// PTX as NVRTC writes it, trimmed to what UsesGridZ reads.
constexpr const char* kPtx = R"(
.version 9.0
.target sm_90
.address_size 64

.func  (.param .b32 func_retval0) _Z6helperi(
	.param .b32 _Z6helperi_param_0
)
{
	.reg .b32 	%r<3>;
	mov.u32 	%r1, %nctaid.z;
	st.param.b32 	[func_retval0+0], %r1;
	ret;
}
.visible .entry flat(
	.param .u64 flat_param_0
)
{
	.reg .b32 	%r<4>;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	ret;
}
.visible .entry deep(
	.param .u64 deep_param_0
)
{
	.reg .b32 	%r<4>;
	mov.u32 	%r1, %ctaid.z;
	ret;
}
.visible .entry calls(
	.param .u64 calls_param_0
)
{
	.reg .b32 	%r<4>;
	{ // callseq 0, 0
	.param .b32 retval0;
	call.uni (retval0), _Z6helperi, (param0);
	} // callseq 0
	ret;
}
)";

TEST_CASE("Kernels that read blockIdx.z or gridDim.z do not fold") {
  const PtxFunctions functions = ParsePtxFunctions(kPtx);
  CHECK(functions.size() == 4);
  CHECK(functions.at("_Z6helperi").callable);
  CHECK_FALSE(functions.at("flat").callable);
  CHECK_FALSE(UsesGridZ(functions, "flat"));
  CHECK(UsesGridZ(functions, "deep"));
  // A call may reach a function that reads them: this one does.
  CHECK(UsesGridZ(functions, "calls"));
  // Unknown kernels are taken to.
  CHECK(UsesGridZ(functions, "missing"));
  // Without any function that reads them, a call is harmless.
  std::string ptx = kPtx;
  ptx.replace(ptx.find("%nctaid.z"), 9, "%nctaid.x");
  CHECK_FALSE(UsesGridZ(ParsePtxFunctions(ptx), "calls"));
}

}  // namespace
}  // namespace kernelc::backends

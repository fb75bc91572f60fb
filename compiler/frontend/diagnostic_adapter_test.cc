// Clang's diagnostics through the adapter look as Clang's own text printer
// shows them: each case is parsed twice, by the frontend into an engine and
// by Clang with its TextDiagnosticPrinter (no colors, no line numbers in the
// margin, as kernelc shows source lines), and the two texts must be equal.
#include "compiler/frontend/diagnostic_adapter.h"

#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/text_renderer.h"
#include "compiler/frontend/frontend.h"

namespace kernelc::frontend {
namespace {

using Files = std::vector<std::pair<std::string, std::string>>;

// The diagnostics of parsing files[0] (the others are headers it may
// include, found with -Iinc), as the frontend reports them, rendered
// without the summary line.
std::string ThroughKernelc(const Files& files) {
  Options o = DefaultOptions();
  o.include_dirs = {"inc"};
  for (const auto& [path, text] : files)
    o.virtual_files.push_back({path, text});
  diag::DiagnosticEngine diags;
  Result<model::Module> m = ParseSources({files[0].first}, o, diags);
  CHECK_FALSE(m.ok());
  return diag::RenderText(diags.diagnostics(), nullptr);
}

// The same, as Clang's own text printer shows them.
std::string ThroughClang(const Files& files) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const auto& [path, text] : files)
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
  auto manager = llvm::makeIntrusiveRefCnt<clang::FileManager>(
      clang::FileSystemOptions(), memory);
  std::string text;
  llvm::raw_string_ostream os(text);
  auto options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  options->ShowLineNumbers = false;
  options->ShowPresumedLoc = true;
  clang::TextDiagnosticPrinter printer(os, options.get());
  clang::tooling::ToolInvocation invocation(
      {"clang", "-fsyntax-only", "-x", "c++", "-std=c++17", "-w",
       "-ferror-limit=0", "-fno-color-diagnostics", "-Iinc", files[0].first},
      std::make_unique<clang::SyntaxOnlyAction>(), manager.get());
  invocation.setDiagnosticConsumer(&printer);
  invocation.run();
  os.flush();
  return text;
}

void CheckLikeClang(const Files& files) {
  std::string kernelc = ThroughKernelc(files);
  CHECK_FALSE(kernelc.empty());
  CHECK(kernelc == ThroughClang(files));
}

TEST_CASE("kernelc's diagnostics keep their identifiers, Clang's have none") {
  Options o = DefaultOptions();
  const std::string src = R"(#include <kernelc.h>
KC_KERNEL void k(KC_IN("n") const float* x, float* y) { undeclared(); }
KC_KERNEL void k(KC_IN("n") const float* x) {}
)";
  o.virtual_files.push_back({"ids.cu", src});
  diag::DiagnosticEngine diags;
  REQUIRE_FALSE(ParseSources({"ids.cu"}, o, diags).ok());
  std::vector<std::string> got;
  for (const diag::Diagnostic& d : diags.diagnostics())
    got.push_back(d.id ? std::string(diag::MessageOf(*d.id).name) : "clang");
  CHECK(got == std::vector<std::string>{"clang", "PointerNeedsRole",
                                        "DuplicateKernelName",
                                        "KernelFirstDefinedHere"});
}

TEST_CASE("an error in a header: its include stack, once per header run") {
  CheckLikeClang({{"main.cu", "#include \"outer.h\"\nint main_ok;\n"},
                  {"inc/outer.h", "int a;\n#include \"inner.h\"\nint b = x;\n"},
                  {"inc/inner.h",
                   "int f() { return undeclared_x; }\n"
                   "int g() { return undeclared_y; }\n"}});
}

TEST_CASE("a macro: notes for its expansions, with their source lines") {
  CheckLikeClang({{"m.cu",
                   "#define ADD(a, b) ((a) + (b))\n"
                   "#define WRAP(x) ADD(x, 1)\n"
                   "struct S {};\n"
                   "int q(S s) { return WRAP(s); }\n"}});
}

TEST_CASE("an error that Clang repeats at one place is shown once") {
  // Both expansions of TWICE add two S: Clang reports the same error at the
  // same place twice, with other notes; the engine keeps the first.
  Files files = {{"m.cu",
                  "#define TWICE(x) ((x) + (x))\n"
                  "#define QUAD(x) TWICE(TWICE(x))\n"
                  "struct S {};\n"
                  "int q(S s) { return QUAD(s); }\n"}};
  std::string clang = ThroughClang(files);
  std::string kernelc = ThroughKernelc(files);
  const std::string error =
      "m.cu:4:21: error: invalid operands to binary expression ('S' and 'S')";
  CHECK(clang.find(error) != clang.rfind(error));
  CHECK(kernelc.find(error) == kernelc.rfind(error));
  CHECK(clang.substr(0, kernelc.size()) == kernelc);
}

TEST_CASE("ranges are underlined, and fix-its shown") {
  CheckLikeClang({{"r.cu",
                   "struct S {};\n"
                   "int h(S s, int i) { return s + i; }\n"
                   "int k() {\n"
                   "  int y = 1\n"
                   "  return y;\n"
                   "}\n"}});
}

TEST_CASE("notes at the spot of their error, and elsewhere") {
  CheckLikeClang({{"t.cu",
                   "template <typename T> int twice(T t) {\n"
                   "  return t.twice();\n"
                   "}\n"
                   "int n = twice(3);\n"
                   "void over(int);\nvoid over(float);\n"
                   "void call() { over(nullptr); }\n"}});
}

TEST_CASE("source lines with tabs and UTF-8") {
  CheckLikeClang({{"u.cu",
                   "int\tx = \"\xc3\xa9t\xc3\xa9\" + y;\n"
                   "/* \xe4\xb8\x96 */ int z = w;\n"}});
}

TEST_CASE("a fatal error") {
  CheckLikeClang(
      {{"f.cu", "int a = b;\n#include \"missing.h\"\nint c = d;\n"}});
}

}  // namespace
}  // namespace kernelc::frontend

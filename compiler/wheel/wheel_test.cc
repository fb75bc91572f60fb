#include "compiler/wheel/wheel.h"

#include <catch2/catch.hpp>

#include "compiler/wheel/test_elf.h"

namespace kernelc::wheel {
namespace {

// A package whose library is an x86-64 ELF shared library that needs
// nothing: every manylinux policy admits it.
Files Package() {
  return {{"__init__.py", "import ctypes\n"},
          {"_kernelc_0123456789ab.so", HeaderOnlyElf("EM_X86_64")},
          {"kernelc.json",
           R"({"package": "saxpy", "library": "_kernelc_0123456789ab.so",)"
           R"( "xla_ffi_api": "0.2", "jaxlib_headers": "0.8.1",)"
           R"( "targets": ["cpu"], "kernels": [{"python_name": "saxpy"}]})"},
          {"py.typed", ""}};
}

Options Opts() {
  Options o;
  o.version = "1.2.0";
  o.requires_python = ">=3.11";
  o.generator = "kernelc 0.1.0";
  return o;
}

// What MakeWheel reports about `package`, or "" when it makes a wheel.
std::string Rejection(const Files& package, const Options& o) {
  diag::DiagnosticEngine diags;
  Result<Wheel> w = MakeWheel(package, o, diags);
  if (w.ok()) return "";
  CHECK(w.error().kind == ErrorKind::kReported);
  return diags.Render();
}

Wheel Make(const Files& package, const Options& o) {
  diag::DiagnosticEngine diags;
  Result<Wheel> w = MakeWheel(package, o, diags);
  INFO(diags.Render());
  REQUIRE(w.ok());
  CHECK(diags.diagnostics().empty());
  return std::move(w).value();
}

std::string Entry(const Wheel& w, const std::string& name) {
  for (const auto& [n, bytes] : w.entries)
    if (n == name) return bytes;
  FAIL("no entry " << name);
  return "";
}

TEST_CASE("RecordHash is urlsafe base64 without padding") {
  // SHA-256 of "" is e3b0c442...; its base64 is 47DEQpj8HBSa+/TImW+5JCeu...
  REQUIRE(RecordHash("") ==
          "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST_CASE("MakeWheel names, tags and records the wheel") {
  Result<Wheel> w = Make(Package(), Opts());
  // auditwheel repair's file name: the tags sorted, joined by dots.
  REQUIRE(w.value().file_name ==
          "saxpy-1.2.0-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl");
  std::vector<std::string> names;
  for (const auto& [n, b] : w.value().entries) names.push_back(n);
  REQUIRE(names == std::vector<std::string>{
                       "saxpy/__init__.py", "saxpy/_kernelc_0123456789ab.so",
                       "saxpy/kernelc.json", "saxpy/py.typed",
                       "saxpy-1.2.0.dist-info/METADATA",
                       "saxpy-1.2.0.dist-info/WHEEL",
                       "saxpy-1.2.0.dist-info/RECORD"});
  REQUIRE(Entry(w.value(), "saxpy-1.2.0.dist-info/WHEEL") ==
          "Wheel-Version: 1.0\nGenerator: kernelc 0.1.0\nRoot-Is-Purelib: "
          "false\nTag: py3-none-manylinux_2_5_x86_64\n"
          "Tag: py3-none-manylinux1_x86_64\n");
  std::string metadata = Entry(w.value(), "saxpy-1.2.0.dist-info/METADATA");
  REQUIRE(metadata.substr(0, metadata.find("\n\n")) ==
          "Metadata-Version: 2.1\n"
          "Name: saxpy\n"
          "Version: 1.2.0\n"
          "Summary: JAX ops compiled by kernelc 0.1.0: saxpy\n"
          "Requires-Python: >=3.11\n"
          "Requires-Dist: jax>=0.8.1\n"
          "Requires-Dist: jaxlib>=0.8.1\n"
          "Requires-Dist: numpy\n"
          "Description-Content-Type: text/plain");
  REQUIRE(metadata.find("XLA FFI API 0.2") != std::string::npos);
  const std::string& record = w.value().entries.back().second;
  REQUIRE(record.find("saxpy/__init__.py," + RecordHash("import ctypes\n") +
                      ",14\n") == 0);
  REQUIRE(record.find("saxpy/py.typed," + RecordHash("") + ",0\n") !=
          std::string::npos);
  REQUIRE(record.substr(record.size() - 31) ==
          "saxpy-1.2.0.dist-info/RECORD,,\n");
}

TEST_CASE("MakeWheel normalises the version and escapes the name") {
  Options o = Opts();
  o.version = "v1.0-DEV";
  o.distribution = "My.Fast--Ops";
  o.summary = "Fast ops";
  o.requirements = {"scipy>=1.11", " optax ; python_version >= '3.12' "};
  o.platform = "manylinux2014_x86_64";
  Result<Wheel> w = Make(Package(), o);
  REQUIRE(w.value().file_name ==
          "my_fast_ops-1.0.dev0-py3-none-manylinux2014_x86_64."
          "manylinux_2_17_x86_64.whl");
  std::string metadata =
      Entry(w.value(), "my_fast_ops-1.0.dev0.dist-info/METADATA");
  REQUIRE(metadata.find("Name: My.Fast--Ops\nVersion: 1.0.dev0\n"
                        "Summary: Fast ops\n") != std::string::npos);
  REQUIRE(metadata.find("Requires-Dist: numpy\n"
                        "Requires-Dist: scipy>=1.11\n"
                        "Requires-Dist: optax ; python_version >= '3.12'\n") !=
          std::string::npos);
  // The import name stays the package's.
  REQUIRE(w.value().entries.front().first == "saxpy/__init__.py");
}

TEST_CASE("CheckOptions reports every bad piece of metadata") {
  Options o = Opts();
  o.version = "1.2-gamma";
  o.distribution = "-ops";
  o.summary = "two\nlines";
  o.requirements = {"scipy >= ", "numpy", "caf\xc3\xa9"};
  diag::DiagnosticEngine diags;
  Status s = CheckOptions(o, diags);
  REQUIRE(s.error().kind == ErrorKind::kReported);
  CHECK(diags.Render() ==
        "kernelc: error: '1.2-gamma' is not a valid version (PEP 440, e.g. "
        "1.2.0, 1.2rc1, 1.2.post1, 1.2.dev3, 1!1.2+local.7)\n"
        "kernelc: error: '-ops' is not a valid distribution name: letters, "
        "digits, '.', '-' and '_', starting and ending with a letter or "
        "digit\n"
        "kernelc: error: the summary must be one line of text\n"
        "kernelc: error: 'scipy >= ' is not a valid requirement (PEP 508, e.g. "
        "'scipy>=1.11' or 'cupy-cuda12x; sys_platform == \"linux\"'): "
        "expected semicolon (after name with no version specifier) or end at "
        "column 7\n"
        "kernelc: error: 'caf\xc3\xa9' is not a valid requirement (PEP 508): "
        "only printable ASCII text\n");
}

TEST_CASE("MakeWheel rejects bad packages and platform tags") {
  Options o = Opts();
  o.platform = "linux-x86_64";
  CHECK(Rejection(Package(), o) ==
        "kernelc: error: 'linux-x86_64' is not a Linux platform tag: "
        "'_kernelc_0123456789ab.so' is an ELF shared library for Linux on "
        "x86_64 (EM_X86_64, 64-bit, little-endian)\n"
        "kernelc: note: the widest tag it can have is manylinux_2_5_x86_64\n");
  Files p = Package();
  p.erase("_kernelc_0123456789ab.so");
  CHECK(Rejection(p, Opts()) ==
        "kernelc: error: the package lacks its library "
        "'_kernelc_0123456789ab.so': rebuild it\n");
  p["kernelc.json"].replace(p["kernelc.json"].find("\"saxpy\""), 7,
                            "\"_saxpy\"");
  p["_kernelc_0123456789ab.so"] = HeaderOnlyElf("EM_X86_64");
  CHECK(Rejection(p, Opts()) ==
        "kernelc: error: the package's name '_saxpy' is not a valid "
        "distribution name: give one with --dist-name\n");
  p.erase("kernelc.json");
  CHECK(Rejection(p, Opts()) ==
        "kernelc: error: the package has no kernelc.json manifest\n");
}

}  // namespace
}  // namespace kernelc::wheel

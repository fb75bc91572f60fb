#include "compiler/wheel/wheel.h"

#include <catch2/catch.hpp>
#include <string>

namespace kernelc::wheel {
namespace {

Files Package() {
  return {{"__init__.py", "import ctypes\n"},
          {"_kernelc_0123456789ab.so", std::string("\x7f"
                                                   "ELF\0\1",
                                                   6)},
          {"kernelc.json",
           R"({"package": "saxpy", "library": "_kernelc_0123456789ab.so",)"
           R"( "xla_ffi_api": "0.2", "jaxlib_headers": "0.8.1",)"
           R"( "targets": ["cpu"], "kernels": [{"python_name": "saxpy"}]})"}};
}

Options Opts() { return {"1.2.0", "linux_x86_64", "kernelc 0.1.0", 0}; }

TEST_CASE("RecordHash is urlsafe base64 without padding") {
  // SHA-256 of "" is e3b0c442...; its base64 is 47DEQpj8HBSa+/TImW+5JCeu...
  REQUIRE(RecordHash("") ==
          "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST_CASE("MakeWheel names, tags and records the wheel") {
  diag::DiagnosticEngine diags;
  Result<Wheel> w = MakeWheel(Package(), Opts(), diags);
  CHECK(diags.diagnostics().empty());
  REQUIRE(w.ok());
  REQUIRE(w.value().file_name == "saxpy-1.2.0-py3-none-linux_x86_64.whl");
  std::vector<std::string> names;
  for (const auto& [n, b] : w.value().entries) names.push_back(n);
  REQUIRE(names == std::vector<std::string>{
                       "saxpy/__init__.py", "saxpy/_kernelc_0123456789ab.so",
                       "saxpy/kernelc.json", "saxpy-1.2.0.dist-info/METADATA",
                       "saxpy-1.2.0.dist-info/WHEEL",
                       "saxpy-1.2.0.dist-info/RECORD"});
  const std::string& wheel = w.value().entries[4].second;
  REQUIRE(wheel ==
          "Wheel-Version: 1.0\nGenerator: kernelc 0.1.0\nRoot-Is-Purelib: "
          "false\nTag: py3-none-linux_x86_64\n");
  const std::string& metadata = w.value().entries[3].second;
  REQUIRE(metadata.find("Name: saxpy\nVersion: 1.2.0\n") != std::string::npos);
  REQUIRE(metadata.find("Requires-Dist: jax>=0.8.1\n") != std::string::npos);
  REQUIRE(metadata.find("Requires-Dist: jaxlib>=0.8.1\n") != std::string::npos);
  REQUIRE(metadata.find("XLA FFI API 0.2") != std::string::npos);
  const std::string& record = w.value().entries[5].second;
  REQUIRE(record.find("saxpy/__init__.py," + RecordHash("import ctypes\n") +
                      ",14\n") == 0);
  REQUIRE(record.substr(record.size() - 31) ==
          "saxpy-1.2.0.dist-info/RECORD,,\n");
}

// What MakeWheel reports about `package`, or "" when it makes a wheel.
std::string Rejection(const Files& package, const Options& o) {
  diag::DiagnosticEngine diags;
  Result<Wheel> w = MakeWheel(package, o, diags);
  if (w.ok()) return "";
  CHECK(w.error().kind == ErrorKind::kReported);
  return diags.Render();
}

TEST_CASE("MakeWheel rejects bad versions, tags and packages") {
  Options o = Opts();
  o.version = "1.2-beta";
  CHECK(Rejection(Package(), o) ==
        "kernelc: error: '1.2-beta' is not a valid version (PEP 440, e.g. "
        "1.2.0)\n");
  o = Opts();
  o.platform = "linux-x86_64";
  CHECK(Rejection(Package(), o) ==
        "kernelc: error: 'linux-x86_64' is not a platform tag (e.g. "
        "linux_x86_64)\n");
  Files p = Package();
  p.erase("_kernelc_0123456789ab.so");
  CHECK(Rejection(p, Opts()) ==
        "kernelc: error: the package lacks its library "
        "'_kernelc_0123456789ab.so': rebuild it\n");
  p.erase("kernelc.json");
  CHECK(Rejection(p, Opts()) ==
        "kernelc: error: the package has no kernelc.json manifest\n");
}

}  // namespace
}  // namespace kernelc::wheel

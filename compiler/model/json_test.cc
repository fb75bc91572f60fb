#include "compiler/model/json.h"

#include <catch2/catch.hpp>

namespace kernelc::model {
namespace {

Module SampleModule() {
  Module m;
  m.sources = {"saxpy.cu"};
  Kernel k;
  k.name = "saxpy";
  k.kind = KernelKind::kGlobal;
  k.source = "saxpy.cu";
  k.loc = {"saxpy.cu", 4, 17};
  k.grid = {{"out.size", {"saxpy.cu", 2, 10}}};
  k.block = {256};
  k.block_features = {{"__syncthreads", {"saxpy.cu", 9, 3}}};
  k.extern_shared = {{{}, "smem", "float"}, {{"ops", ""}, "tile", "__half"}};
  k.vjp = Text{"saxpy_bwd", {"saxpy.cu", 3, 9}};
  k.elementwise = true;
  k.jvp = Text{"saxpy_jvp", {"saxpy.cu", 3, 30}};
  k.parallel = {{"n", {"saxpy.cu", 3, 40}}, {"m", {"saxpy.cu", 3, 45}}};
  Param x{"x",
          Role::kIn,
          DType::kF32,
          Access::kPointer,
          -1,
          Text{"n", {"saxpy.cu", 4, 30}},
          std::nullopt,
          std::nullopt,
          false,
          false,
          {"saxpy.cu", 4, 48}};
  Param a{"a", Role::kScalar, DType::kF32};
  a.loc = {"saxpy.cu", 5, 9};
  Param n{"n", Role::kDerived, DType::kI64};
  n.derived = Text{"x.size", {"saxpy.cu", 6, 12}};
  Param out{"out",
            Role::kOut,
            DType::kBF16,
            Access::kView,
            2,
            Text{"x", {"saxpy.cu", 7, 12}},
            Text{"0", {"saxpy.cu", 7, 20}},
            std::nullopt,
            false,
            false,
            {"saxpy.cu", 7, 40}};
  k.params = {x, a, n, out};
  m.kernels.push_back(k);
  Kernel h;
  h.name = "host_fn";
  h.kind = KernelKind::kHost;
  h.source = "saxpy.cu";
  h.loc = {"saxpy.cu", 20, 6};
  m.kernels.push_back(h);
  return m;
}

TEST_CASE("model round-trips through canonical JSON") {
  Module m = SampleModule();
  std::string text = ToCanonicalJson(m);
  diag::DiagnosticEngine diags;
  Result<Module> back = FromJson(text, "spec.json", diags);
  REQUIRE(back.ok());
  CHECK(diags.diagnostics().empty());
  CHECK(ToCanonicalJson(back.value()) == text);
  const Kernel& k = back.value().kernels[0];
  CHECK(k.params[3].dtype == DType::kBF16);
  CHECK(k.params[3].access == Access::kView);
  CHECK(k.params[3].init->text == "0");
  CHECK(k.params[3].init->loc.ToString() == "saxpy.cu:7:20");
  CHECK(k.block_features[0].what == "__syncthreads");
  REQUIRE(k.extern_shared.size() == 2);
  CHECK(k.extern_shared[1].namespaces == std::vector<std::string>{"ops", ""});
  CHECK(k.extern_shared[1].name == "tile");
  CHECK(k.extern_shared[1].type == "__half");
  CHECK(back.value().kernels[1].kind == KernelKind::kHost);
  CHECK(k.vjp->text == "saxpy_bwd");
  CHECK(k.elementwise);
  CHECK(k.jvp->text == "saxpy_jvp");
  CHECK(!back.value().kernels[1].elementwise);
  CHECK(k.vjp->loc.ToString() == "saxpy.cu:3:9");
  REQUIRE(k.parallel.size() == 2);
  CHECK(k.parallel[1].text == "m");
  CHECK(k.parallel[1].loc.ToString() == "saxpy.cu:3:45");
  CHECK(!back.value().kernels[1].vjp);
  CHECK(back.value().kernels[1].parallel.empty());
}

TEST_CASE("canonical JSON has sorted keys and declaration-ordered lists") {
  std::string text = ToCanonicalJson(SampleModule());
  CHECK(text.find("\"kernels\"") < text.find("\"sources\""));
  CHECK(text.find("\"block\"") < text.find("\"grid\""));
  CHECK(text.find("\"parallel\"") < text.find("\"params\""));
  CHECK(text.find("\"source\"") < text.find("\"vjp\""));
  CHECK(text.find("\"name\": \"x\"") < text.find("\"name\": \"out\""));
  CHECK(text.back() == '\n');
}

TEST_CASE("hand-written specs may give texts as plain strings") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "global",
      "grid": ["n"], "params": [{"name": "x", "role": "in",
      "dtype": "int32", "shape": "n"}]}]})",
                              "k.json", diags);
  REQUIRE(m.ok());
  const Kernel& k = m.value().kernels[0];
  CHECK(k.grid[0].text == "n");
  CHECK(k.grid[0].loc.ToString() == "k.json");
  CHECK(k.params[0].shape->text == "n");
  CHECK(k.params[0].dtype == DType::kI32);
  CHECK(k.source == "k.json");
  CHECK(m.value().sources == std::vector<std::string>{"k.json"});
}

TEST_CASE("structural errors name the JSON path") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "gpu",
      "params": [{"name": "x", "role": "input", "dtype": "float128"},
                 {"role": "in", "dtype": "float32", "rank": "2"}]}]})",
                              "k.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::kReported);
  std::vector<std::string> got;
  for (const auto& d : diags.diagnostics()) got.push_back(d.message);
  CHECK(got == std::vector<std::string>{
                   "$.kernels[0].kind: unknown kind 'gpu' (expected global or "
                   "host)",
                   "$.kernels[0].params[0].role: unknown role 'input' "
                   "(expected in, inmut, out, scalar or derived)",
                   "$.kernels[0].params[0].dtype: unknown dtype 'float128'",
                   "$.kernels[0].params[1].name: missing",
                   "$.kernels[0].params[1].rank: expected an integer, got "
                   "string",
               });
}

TEST_CASE("a spec's extern __shared__ arrays come out sorted, once each") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "global",
      "grid": ["n"], "params": [], "extern_shared": [
        {"name": "b", "type": "double"},
        {"name": "a", "namespaces": ["ops"], "type": "float"},
        {"name": "b", "type": "double"}]}]})",
                              "k.json", diags);
  REQUIRE(m.ok());
  const std::vector<ExternShared>& e = m.value().kernels[0].extern_shared;
  REQUIRE(e.size() == 2);
  CHECK(e[0].name == "b");
  CHECK(e[0].namespaces.empty());
  CHECK(e[1].name == "a");
  CHECK(e[1].namespaces == std::vector<std::string>{"ops"});
}

TEST_CASE("a spec's extern __shared__ names are C++ names") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "global",
      "grid": ["n"], "params": [], "extern_shared": [
        {"name": "1x", "namespaces": ["a-b"], "type": "float; int y"},
        {"type": "float"}, 3]}]})",
                              "k.json", diags);
  REQUIRE_FALSE(m.ok());
  std::vector<std::string> got;
  for (const auto& d : diags.diagnostics()) got.push_back(d.message);
  CHECK(got == std::vector<std::string>{
                   "$.kernels[0].extern_shared[0].name: '1x' is not a C++ "
                   "identifier",
                   "$.kernels[0].extern_shared[0].type: 'float; int y' is not "
                   "a C++ type name (identifiers, '::', template arguments)",
                   "$.kernels[0].extern_shared[0].namespaces[0]: 'a-b' is not "
                   "a C++ identifier",
                   "$.kernels[0].extern_shared[1].name: missing",
                   "$.kernels[0].extern_shared[2]: expected an object",
               });
}

TEST_CASE("invalid JSON is reported with the byte position") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson("{\"kernels\": [", "bad.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::kReported);
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.diagnostics()[0].message.rfind("invalid JSON at byte 14", 0) ==
        0);
}

TEST_CASE("dtype names and properties") {
  CHECK(DTypeName(DType::kBF16) == "bfloat16");
  CHECK(DTypeFromName("uint16") == DType::kU16);
  CHECK_FALSE(DTypeFromName("float8").has_value());
  CHECK(DTypeBytes(DType::kF64) == 8);
  CHECK(IsFloat(DType::kF16));
  CHECK(IsInteger(DType::kU8));
  CHECK_FALSE(IsInteger(DType::kBool));
  CHECK(DefaultBlock(2) == std::vector<int64_t>{16, 16});
}

}  // namespace
}  // namespace kernelc::model

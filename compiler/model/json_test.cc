#include "compiler/model/json.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

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
  n.loc = {"saxpy.cu", 6, 30};
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
  out.sum = Text{"n", {"saxpy.cu", 7, 30}};
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
  CHECK(k.params[3].sum->text == "n");
  CHECK(k.params[3].sum->loc.ToString() == "saxpy.cu:7:30");
  CHECK(!k.params[0].sum);
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

// The messages of `diags`, each after its location.
std::vector<std::string> Located(const diag::DiagnosticEngine& diags) {
  std::vector<std::string> got;
  for (const auto& d : diags.diagnostics())
    got.push_back(d.loc.ToString() + ": " + d.message);
  return got;
}

TEST_CASE("hand-written specs may give texts as plain strings") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "global",
"source": "k.cu", "grid": ["n"], "params": [{"name": "x", "role": "in",
"dtype": "int32", "shape": "n"}]}]})",
                              "dir/k.json", diags);
  REQUIRE(m.ok());
  const Kernel& k = m.value().kernels[0];
  CHECK(k.grid[0].text == "n");
  // Where each is in the spec: a text at its first character, inside the
  // quotes; a kernel and a parameter at their names.
  CHECK(k.grid[0].loc.ToString() == "dir/k.json:2:29");
  CHECK(k.loc.ToString() == "dir/k.json:1:23");
  CHECK(k.params[0].loc.ToString() == "dir/k.json:2:54");
  CHECK(k.params[0].shape->text == "n");
  CHECK(k.params[0].shape->loc.ToString() == "dir/k.json:3:29");
  CHECK(k.params[0].dtype == DType::kI32);
  // The source is in the spec's directory.
  CHECK(k.source == "dir/k.cu");
  CHECK(m.value().sources == std::vector<std::string>{"dir/k.json"});
}

TEST_CASE("structural errors are located and name the JSON path") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "gpu",
"source": "k.cu",
"params": [{"name": "x", "role": "input", "dtype": "float128"},
           {"role": "in", "dtype": "float32", "rank": "2"}]}]})",
                              "k.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::kReported);
  CHECK(Located(diags) ==
        std::vector<std::string>{
            "k.json:1:36: $.kernels[0].kind: unknown kind 'gpu' (expected "
            "global or host)",
            "k.json:3:34: $.kernels[0].params[0].role: unknown role 'input' "
            "(expected in, inmut, out, scalar or derived)",
            "k.json:3:52: $.kernels[0].params[0].dtype: unknown dtype "
            "'float128'",
            "k.json:4:12: $.kernels[0].params[1].name: missing",
            "k.json:4:55: $.kernels[0].params[1].rank: expected an integer",
        });
}

TEST_CASE("a spec's extern __shared__ arrays come out sorted, once each") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "global",
      "source": "k.cu", "grid": ["n"], "params": [], "extern_shared": [
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
      "source": "k.cu", "grid": ["n"], "params": [], "extern_shared": [
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

TEST_CASE("invalid JSON is reported at its line and column") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson("{\"kernels\": [\n  {\"name\": tru}]}",
                              "bad.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::kReported);
  REQUIRE(diags.error_count() == 1);
  CHECK(diags.diagnostics()[0].loc.ToString() == "bad.json:2:12");
  CHECK(diags.diagnostics()[0].message.rfind("invalid JSON: syntax error", 0) ==
        0);

  diag::DiagnosticEngine end;
  REQUIRE_FALSE(FromJson("{\"kernels\": [", "bad.json", end).ok());
  CHECK(Located(end)[0].rfind("bad.json:1:14: invalid JSON: ", 0) == 0);
  diag::DiagnosticEngine comma;
  REQUIRE_FALSE(FromJson("[1,,2]", "bad.json", comma).ok());
  CHECK(Located(comma)[0].rfind("bad.json:1:4: invalid JSON: ", 0) == 0);
}

TEST_CASE("numbers out of range and deep nesting are user errors") {
  diag::DiagnosticEngine overflow;
  REQUIRE_FALSE(
      FromJson("{\"kernels\": [], \"x\": 1e400}", "s.json", overflow).ok());
  CHECK(Located(overflow) ==
        std::vector<std::string>{
            "s.json:1:22: invalid JSON: number overflow parsing '1e400'"});

  diag::DiagnosticEngine rank;
  REQUIRE_FALSE(FromJson(R"({"kernels": [{"name": "k", "kind": "global",
"source": "k.cu", "block": [18446744073709551615],
"params": [{"name": "x", "role": "in", "dtype": "int8", "rank": 4294967297}]}]})",
                         "s.json", rank)
                    .ok());
  CHECK(Located(rank) ==
        std::vector<std::string>{
            "s.json:2:29: $.kernels[0].block[0]: 18446744073709551615 is out "
            "of range: expected an integer from -9223372036854775808 to "
            "9223372036854775807",
            "s.json:3:65: $.kernels[0].params[0].rank: 4294967297 is out of "
            "range: expected an integer from -1 to 64",
        });

  diag::DiagnosticEngine deep;
  std::string nested = std::string(100, '[') + std::string(100, ']');
  REQUIRE_FALSE(FromJson(nested, "s.json", deep).ok());
  CHECK(Located(deep) ==
        std::vector<std::string>{"s.json:1:65: invalid JSON: objects and "
                                 "arrays nest deeper than 64"});
}

TEST_CASE("a spec's locations point only into its own files") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "host",
"source": "k.cu", "loc": "k.cu:3:6", "params": [
{"name": "x", "role": "in", "dtype": "int8", "shape": "n",
 "loc": "/etc/passwd:1:1"},
{"name": "y", "role": "out", "dtype": "int8",
 "shape": {"text": "n", "loc": "s.json"}},
{"name": "z", "role": "out", "dtype": "int8", "shape": "n", "loc": "k.cu:x:1"}
]}]})",
                              "s.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(Located(diags) ==
        std::vector<std::string>{
            "s.json:7:68: $.kernels[0].params[2].loc: 'k.cu:x:1' is not a "
            "location: \"file:line:col\" with a line and column from 1, "
            "\"file\" or \"\"",
            "s.json:4:9: $.kernels[0].params[0].loc: '/etc/passwd' is neither "
            "this spec nor a source or origin that it names; a spec's "
            "locations point into its own files",
        });
}

TEST_CASE("a spec made from another file places its texts there") {
  // A front end that writes a spec from its own source (a Python kernel)
  // names that file under "origins", with the lines it quotes; texts and
  // dtypes then carry a "loc" in it, which names the file as "origins"
  // does however it is written ("/src/./k.py").
  diag::DiagnosticEngine diags(
      [](const std::string& file) -> std::optional<std::string> {
        FAIL("read " << file);
        return std::nullopt;
      });
  Result<Module> m = FromJson(R"js({"kernels": [{"name": "k", "kind": "global",
"source": "k.cu", "loc": "/src/k.py:2:5", "grid": [{"text": "n", "loc":
"/src/k.py:1:22"}], "params": [{"name": "x", "role": "in", "dtype": {"text":
"float32", "loc": "/src/k.py:2:21"}, "shape": {"text": "n", "loc":
"/src/./k.py:2:33"}}]}],
"origins": {"/src/k.py": {"first_line": 1, "lines": [
"@kernelc.numba(grid=\"n\")", "def k(x: In(np.float32, (\"n\",))):"]}}})js",
                              "dir/k.json", diags);
  REQUIRE(m.ok());
  CHECK(diags.diagnostics().empty());
  const Kernel& k = m.value().kernels[0];
  CHECK(k.loc.ToString() == "/src/k.py:2:5");
  CHECK(k.grid[0].loc.ToString() == "/src/k.py:1:22");
  CHECK(k.params[0].dtype == DType::kF32);
  CHECK(k.params[0].shape->loc.ToString() == "/src/k.py:2:33");
  // Diagnostics there quote the spec's lines; the file is not read.
  diags.Report<diag::Id::kSpecUnknownDtype>(k.params[0].shape->loc, "$", "n");
  CHECK(diags.Render() ==
        "/src/k.py:2:33: error: $: unknown dtype 'n'\n"
        "def k(x: In(np.float32, (\"n\",))):\n"
        "                                ^\n"
        "1 error generated.\n");
}

TEST_CASE("origins are checked, and only they widen a spec's locations") {
  diag::DiagnosticEngine diags;
  Result<Module> m = FromJson(R"({"kernels": [{"name": "k", "kind": "host",
"source": "k.cu", "params": [
{"name": "x", "role": "in", "dtype": {"text": "complex64", "loc": "k.py:3:9"},
 "shape": {"text": "n", "loc": "other.py:1:1"}}]}],
"origins": {"k.py": {"first_line": 0, "lines": ["a", 1]}, "j.py": []}})",
                              "s.json", diags);
  REQUIRE_FALSE(m.ok());
  CHECK(Located(diags) ==
        std::vector<std::string>{
            "s.json:5:67: $.origins.j.py: expected an object",
            "s.json:5:36: $.origins.k.py.first_line: 0 is out of range: "
            "expected an integer from 1 to 2147483647",
            "s.json:5:54: $.origins.k.py.lines[1]: expected a string",
            "k.py:3:9: $.kernels[0].params[0].dtype: unknown dtype "
            "'complex64'",
            "s.json:4:32: $.kernels[0].params[0].shape.loc: 'other.py' is "
            "neither this spec nor a source or origin that it names; a "
            "spec's locations point into its own files",
        });
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

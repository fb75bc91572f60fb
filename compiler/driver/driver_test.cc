#include "compiler/driver/driver.h"

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "compiler/backends/nvrtc_backend.h"
#include "compiler/driver/test_sources.h"
#include "compiler/util/file_io.h"

namespace kernelc::driver {
namespace {

using testing::FilesUnder;
using testing::TempDir;

// A build of saxpy.cu (TempDir::WriteSaxpy) into `t`/out, with a cache in
// `t`/cache.
Options SaxpyOptions(const TempDir& t, const std::string& source) {
  Options o;
  o.sources = {source};
  o.include_dirs = {source.substr(0, source.rfind('/')) + "/inc"};
  o.out_dir = t.path() + "/out";
  o.cache_dir = t.path() + "/cache";
  return o;
}

std::map<std::string, std::string> Contents(const std::string& dir) {
  std::map<std::string, std::string> contents;
  for (const std::string& f : FilesUnder(dir))
    contents[f] = ReadFile(dir + "/" + f).value_or("");
  return contents;
}

// saxpy.cu calling a function that only the GPU has: it compiles for the
// CPU, and fails to link.
std::string UnlinkableSaxpy() {
  std::string text = testing::kSaxpy;
  text.insert(text.find('\n') + 1, "__device__ float gpu_only(float);\n");
  text.replace(text.find("SCALE * a"), sizeof("SCALE") - 1, "gpu_only(SCALE)");
  return text;
}

bool HaveNvrtc() {
  Result<backends::Nvrtc> nvrtc = backends::FindNvrtc();
  if (!nvrtc.ok())
    WARN("skipped, the cuda target needs NVRTC: " << nvrtc.error().message);
  return nvrtc.ok();
}

TEST_CASE(
    "Build writes a package; the same build again hits the cache and "
    "writes nothing") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<BuildResult> r = Build(o, d);
  INFO(d.Render());
  REQUIRE(r.ok());
  CHECK(d.Render().empty());
  const BuildResult& first = r.value();
  CHECK_FALSE(first.cache_hit);
  CHECK(first.package == "saxpy");
  CHECK(first.package_dir == o.out_dir + "/saxpy");
  CHECK(llvm::StringRef(first.library).starts_with("_kernelc_"));
  CHECK(llvm::StringRef(first.library).ends_with(".so"));
  std::vector<std::string> files = {"__init__.py", "__init__.pyi",
                                    "_kernelc.py", "kernelc.json",
                                    "py.typed",    first.library};
  std::sort(files.begin(), files.end());
  CHECK(first.written == files);
  // Nothing but the package: the scratch directory is gone.
  std::vector<std::string> in_out;
  for (const std::string& f : files) in_out.push_back("saxpy/" + f);
  CHECK(FilesUnder(o.out_dir) == in_out);

  std::map<std::string, llvm::sys::TimePoint<>> mtimes;
  for (const std::string& f : files) {
    llvm::sys::fs::file_status st;
    REQUIRE(!llvm::sys::fs::status(first.package_dir + "/" + f, st));
    mtimes[f] = st.getLastModificationTime();
  }
  diag::DiagnosticEngine again(diag::ReadSourceFile);
  Result<BuildResult> hit = Build(o, again);
  REQUIRE(hit.ok());
  CHECK(again.Render().empty());
  CHECK(hit.value().cache_hit);
  CHECK(hit.value().library == first.library);
  CHECK(hit.value().written.empty());
  for (const std::string& f : files) {
    llvm::sys::fs::file_status st;
    REQUIRE(!llvm::sys::fs::status(first.package_dir + "/" + f, st));
    CHECK(st.getLastModificationTime() == mtimes[f]);
  }

  // Without the cache, the same bytes.
  Options uncached = o;
  uncached.no_cache = true;
  uncached.out_dir = t.path() + "/uncached";
  diag::DiagnosticEngine d3(diag::ReadSourceFile);
  Result<BuildResult> rebuilt = Build(uncached, d3);
  REQUIRE(rebuilt.ok());
  CHECK_FALSE(rebuilt.value().cache_hit);
  CHECK(Contents(uncached.out_dir) == Contents(o.out_dir));
}

TEST_CASE(
    "An edited header gives the library a new name, as an edited source "
    "does; where the header lies does not") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  o.no_cache = true;
  auto library = [](const Options& o) {
    diag::DiagnosticEngine d(diag::ReadSourceFile);
    Result<EmitResult> r = Emit(o, d);
    INFO(d.Render());
    REQUIRE(r.ok());
    return r.value().content_hash;
  };
  const std::string first = library(o);
  t.Write("src/inc/scale.h", "#define SCALE 2.0f\n");
  CHECK(library(o) != first);
  t.Write("src/inc/scale.h", testing::kScaleHeader);
  CHECK(library(o) == first);
  // The same source and header elsewhere.
  Options moved = SaxpyOptions(t, t.WriteSaxpy("moved"));
  moved.no_cache = true;
  CHECK(library(moved) == first);
}

TEST_CASE(
    "Build reports its stages as they finish: the frontend, each host "
    "compile and the link, or the cache hit") {
  TempDir t;
  std::string src = t.WriteSaxpy();
  Options o = SaxpyOptions(t, src);
  std::vector<ProgressEvent> events;
  Progress progress([&](const ProgressEvent& e) { events.push_back(e); });
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<BuildResult> r = Build(o, d, &progress);
  INFO(d.Render());
  REQUIRE(r.ok());
  std::multiset<std::pair<std::string, std::string>> stages;
  for (const ProgressEvent& e : events) {
    CHECK(e.seconds >= 0);
    stages.insert({e.stage, e.detail});
  }
  CHECK(stages == std::multiset<std::pair<std::string, std::string>>{
                      {"frontend", src},
                      {"host compile", src},
                      {"host compile", "XLA FFI shim"},
                      {"link", r.value().library}});
  // The frontend comes first and the link last; the compiles run at the
  // same time.
  REQUIRE(events.size() == 4);
  CHECK(events.front().stage == "frontend");
  CHECK(events.back().stage == "link");

  events.clear();
  REQUIRE(Build(o, d, &progress).value().cache_hit);
  REQUIRE(events.size() == 1);
  CHECK(events[0].stage == "build cache");
  CHECK(events[0].detail == "hit");

  // A build that fails reports the stages that finished, not the one that
  // failed.
  t.Write("src/saxpy.cu", UnlinkableSaxpy());
  events.clear();
  REQUIRE_FALSE(Build(o, d, &progress).ok());
  REQUIRE_FALSE(events.empty());
  for (const ProgressEvent& e : events) CHECK(e.stage != "link");
}

TEST_CASE(
    "A failed build leaves the earlier package as it was, and no "
    "scratch directory") {
  TempDir t;
  std::string src = t.WriteSaxpy();
  Options o = SaxpyOptions(t, src);
  o.no_cache = true;
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  REQUIRE(Build(o, d).ok());
  const std::map<std::string, std::string> before = Contents(o.out_dir);

  SECTION("an error in the annotations") {
    std::string text = testing::kSaxpy;
    text.replace(text.find("KC_IN(\"n\") const float* y"),
                 sizeof("KC_IN(\"n\") ") - 1, "");
    t.Write("src/saxpy.cu", text);
    diag::DiagnosticEngine failed(diag::ReadSourceFile);
    Result<BuildResult> r = Build(o, failed);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kReported);
    // The diagnostics say it all, once.
    CHECK(
        failed.Render() ==
        src +
            ":5:63: error: pointer parameter 'y' of kernel 'saxpy' needs a "
            "role: KC_IN, KC_INMUT or KC_OUT\n"
            "__global__ void saxpy(KC_IN(\"n\") const float* x, const "
            "float* y,\n"
            "                                                              ^\n"
            "1 error generated.\n");
  }
  SECTION("a kernel that the CPU cannot link, after the compile started") {
    t.Write("src/saxpy.cu", UnlinkableSaxpy());
    diag::DiagnosticEngine failed(diag::ReadSourceFile);
    Result<BuildResult> r = Build(o, failed);
    INFO(failed.Render());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kReported);
    CHECK(llvm::StringRef(failed.Render())
              .starts_with("kernelc: error: linking the kernels for the CPU "
                           "failed"));
  }
  SECTION("sources that the CPU's compiler rejects, each reported") {
    // Both compile at the same time; each failure is reported, in link
    // order, and neither is taken for kernelc's own.
    std::string host_only_error =
        "#ifdef __KERNELC_HOST__\n#error not for the CPU\n#endif\n";
    t.Write("src/saxpy.cu", host_only_error + testing::kSaxpy);
    std::string other = testing::kSaxpy;
    other.replace(other.find("saxpy"), sizeof("saxpy") - 1, "saxpy2");
    o.sources.push_back(t.Write("src/other.cu", host_only_error + other));
    diag::DiagnosticEngine failed(diag::ReadSourceFile);
    Result<BuildResult> r = Build(o, failed);
    INFO(failed.Render());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kReported);
    REQUIRE(failed.diagnostics().size() == 2);
    for (const diag::Diagnostic& e : failed.diagnostics()) {
      CHECK(e.id == diag::Id::kHostCompileFailed);
      CHECK(llvm::StringRef(e.message).contains("not for the CPU"));
    }
    CHECK(llvm::StringRef(failed.diagnostics()[0].message)
              .starts_with("compiling host_0_saxpy.cc"));
    CHECK(llvm::StringRef(failed.diagnostics()[1].message)
              .starts_with("compiling host_1_other.cc"));
  }
  CHECK(Contents(o.out_dir) == before);
}

TEST_CASE("Option errors are diagnostics without a location") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  struct Case {
    const char* message;
    void (*change)(Options&);
  };
  const Case cases[] = {
      {"--cuda-arch needs the cuda target",
       [](Options& o) { o.cuda_arch = "sm_80"; }},
      {"--use-fast-math needs the cuda target",
       [](Options& o) { o.use_fast_math = true; }},
      {"--lineinfo needs the cuda target",
       [](Options& o) { o.lineinfo = true; }},
      {"'2bad' is not a valid Python package name: use --name",
       [](Options& o) { o.name = "2bad"; }},
  };
  for (const Case& c : cases) {
    Options bad = o;
    c.change(bad);
    diag::DiagnosticEngine d(diag::ReadSourceFile);
    Result<BuildResult> r = Build(bad, d);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kReported);
    CHECK(d.Render() == fmt::format("kernelc: error: {}\n", c.message));
    // A build from sources into a wheel reports it once too.
    diag::DiagnosticEngine w(diag::ReadSourceFile);
    REQUIRE_FALSE(Wheel(bad, w).ok());
    CHECK(w.Render() == d.Render());
  }
  CHECK_FALSE(llvm::sys::fs::exists(o.out_dir));
  diag::DiagnosticEngine d;
  Result<std::vector<model::Target>> targets = ParseTargets("cpu,tpu", d);
  REQUIRE_FALSE(targets.ok());
  CHECK(d.Render() ==
        "kernelc: error: unknown target 'tpu' (expected cpu or cuda)\n");
}

TEST_CASE("Emit writes the generated sources, without compiling them") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<EmitResult> r = Emit(o, d);
  REQUIRE(r.ok());
  CHECK(r.value().written ==
        std::vector<std::string>{"package/__init__.py", "package/__init__.pyi",
                                 "package/_kernelc.py", "package/kernelc.json",
                                 "package/py.typed", "build/host_0_saxpy.cc",
                                 "build/shim.cc"});
  CHECK(FilesUnder(o.out_dir).size() == r.value().written.size());
  nlohmann::json manifest =
      nlohmann::json::parse(*ReadFile(o.out_dir + "/package/kernelc.json"));
  CHECK(manifest["content_hash"] == r.value().content_hash);
  CHECK(manifest["targets"] == nlohmann::json::array({"cpu"}));
  // Again: nothing changed, nothing written.
  diag::DiagnosticEngine again(diag::ReadSourceFile);
  Result<EmitResult> same = Emit(o, again);
  REQUIRE(same.ok());
  CHECK(same.value().written.empty());
}

TEST_CASE("User names that meet after escaping are reported at the second") {
  // "lambda" is escaped onto the user's own "lambda_": a Python function
  // with two arguments of one name, or two functions of one name, cannot
  // work.
  TempDir t;
  t.Write("k.cu",
          "void k(float lambda, float lambda_, float* y) {}\n"
          "void lambda(float* y) {}\n"
          "void lambda_(float* y) {}\n");
  std::string spec = t.Write("k.json", R"({"kernels": [
  {"name": "k", "kind": "host", "source": "k.cu", "params": [
    {"name": "lambda", "role": "scalar", "dtype": "float32"},
    {"name": "lambda_", "role": "scalar", "dtype": "float32"},
    {"name": "y", "role": "out", "dtype": "float32", "shape": "1"}]},
  {"name": "lambda", "kind": "host", "source": "k.cu", "params": [
    {"name": "y", "role": "out", "dtype": "float32", "shape": "1"}]},
  {"name": "lambda_", "kind": "host", "source": "k.cu", "params": [
    {"name": "y", "role": "out", "dtype": "float32", "shape": "1"}],
   "loc": "k.cu:3:6"}]})");
  Options o;
  o.sources = {spec};
  o.out_dir = t.path() + "/out";
  diag::DiagnosticEngine d;
  Result<EmitResult> r = Emit(o, d);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::kReported);
  CHECK(d.Render() ==
        spec +
            ":4:14: error: parameters 'lambda' and 'lambda_' of kernel 'k' "
            "both become the Python argument 'lambda_'; rename one\n" +
            t.path() +
            "/k.cu:3:6: error: kernels 'lambda' and 'lambda_' both become "
            "the Python function 'lambda_'; rename one\n"
            "2 errors generated.\n");
  CHECK_FALSE(llvm::sys::fs::exists(o.out_dir));
}

TEST_CASE("The content hash does not depend on where the sources lie") {
  TempDir a, b;
  Options oa = SaxpyOptions(a, a.WriteSaxpy("src"));
  Options ob = SaxpyOptions(b, b.WriteSaxpy("deeper/still/src"));
  diag::DiagnosticEngine da(diag::ReadSourceFile), db(diag::ReadSourceFile);
  Result<EmitResult> ra = Emit(oa, da);
  Result<EmitResult> rb = Emit(ob, db);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(ra.value().content_hash == rb.value().content_hash);
  CHECK(Contents(oa.out_dir) == Contents(ob.out_dir));
}

TEST_CASE("Inspect reads the sources, or a built package's manifest") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<InspectResult> model = Inspect(o, d);
  REQUIRE(model.ok());
  nlohmann::json j = nlohmann::json::parse(model.value().json);
  REQUIRE(j["kernels"].size() == 1);
  CHECK(j["kernels"][0]["name"] == "saxpy");
  CHECK(j["sources"] == nlohmann::json::array({o.sources[0]}));

  Result<BuildResult> built = Build(o, d);
  REQUIRE(built.ok());
  Options package;
  package.sources = {built.value().package_dir};
  Result<InspectResult> manifest = Inspect(package, d);
  REQUIRE(manifest.ok());
  j = nlohmann::json::parse(manifest.value().json);
  CHECK(j["library"] == built.value().library);
  CHECK(j["targets"] == nlohmann::json::array({"cpu"}));

  Options not_package;
  not_package.sources = {t.path() + "/src"};
  diag::DiagnosticEngine nd(diag::ReadSourceFile);
  Result<InspectResult> r = Inspect(not_package, nd);
  REQUIRE_FALSE(r.ok());
  CHECK(nd.Render() == "kernelc: error: '" + t.path() +
                           "/src' is a directory but not a package built by "
                           "kernelc (no kernelc.json)\n");
}

TEST_CASE("Wheel packages a package directory, or sources built first") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<BuildResult> built = Build(o, d);
  REQUIRE(built.ok());

  Options from_dir;
  from_dir.sources = {built.value().package_dir};
  from_dir.out_dir = t.path() + "/dist1";
  Result<WheelResult> w1 = Wheel(from_dir, d);
  REQUIRE(w1.ok());
  // The tag is the library's (manylinux_*_<arch>, or linux_<arch>).
  CHECK(llvm::StringRef(w1.value().path)
            .starts_with(from_dir.out_dir + "/saxpy-0.0.0-py3-none-"));
  CHECK(llvm::StringRef(w1.value().path).contains("linux"));
  CHECK_FALSE(w1.value().build.has_value());

  Options from_sources = o;
  from_sources.out_dir = t.path() + "/dist2";
  Result<WheelResult> w2 = Wheel(from_sources, d);
  REQUIRE(w2.ok());
  REQUIRE(w2.value().build.has_value());
  CHECK(w2.value().build->library == built.value().library);
  // Built in a scratch directory, which is gone.
  CHECK_FALSE(llvm::sys::fs::exists(w2.value().build->package_dir));
  // The same package, the same bytes.
  CHECK(ReadFile(w2.value().path) == ReadFile(w1.value().path));
  CHECK(d.Render().empty());
}

TEST_CASE("Wheel checks its metadata before it builds") {
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  o.out_dir = t.path() + "/dist";
  o.wheel_version = "1.0-x";
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<WheelResult> w = Wheel(o, d);
  REQUIRE_FALSE(w.ok());
  CHECK(d.Render() ==
        "kernelc: error: '1.0-x' is not a valid version (PEP 440, e.g. 1.2.0, "
        "1.2rc1, 1.2.post1, 1.2.dev3, 1!1.2+local.7)\n");
  // Nothing was built: the build would have filled the cache.
  CHECK_FALSE(llvm::sys::fs::exists(o.cache_dir));
  CHECK_FALSE(llvm::sys::fs::exists(o.out_dir));
}

TEST_CASE("A host kernel needs the cpu target beside the cuda target") {
  TempDir t;
  std::string src = t.Write("host.cc", R"(#include <kernelc.h>
KC_KERNEL void twice(KC_IN("n") const float* x, KC_OUT("x") float* y) {}
)");
  Options o;
  o.sources = {src};
  o.out_dir = t.path() + "/out";
  o.no_cache = true;
  o.targets = {model::Target::kCuda};
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<EmitResult> r = Emit(o, d);
  REQUIRE_FALSE(r.ok());
  CHECK(llvm::StringRef(d.Render())
            .starts_with(src + ":2:16: error: host kernel 'twice' (KC_KERNEL) "
                               "runs only on the CPU: "
                               "build with --target cpu,cuda\n"));
}

TEST_CASE("A build for the cuda target compiles with NVRTC") {
  if (!HaveNvrtc()) return;
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  o.targets = {model::Target::kCpu, model::Target::kCuda};
  o.cuda_arch = "sm_80";
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  Result<EmitResult> r = Emit(o, d);
  INFO(d.Render());
  REQUIRE(r.ok());
  std::vector<std::string> files = FilesUnder(o.out_dir);
  CHECK(std::count(files.begin(), files.end(),
                   "build/cuda/0_saxpy.sm_80.cubin") == 1);
  std::optional<std::string> ptx =
      ReadFile(o.out_dir + "/build/cuda/0_saxpy.compute_80.ptx");
  REQUIRE(ptx);
  CHECK(ptx->find(".entry") != std::string::npos);
  nlohmann::json manifest =
      nlohmann::json::parse(*ReadFile(o.out_dir + "/package/kernelc.json"));
  CHECK(manifest["targets"] == nlohmann::json::array({"cpu", "cuda"}));
  CHECK(manifest["cuda"]["archs"] == nlohmann::json::array({"sm_80"}));
}

TEST_CASE("--lineinfo reaches NVRTC: the PTX maps to source lines") {
  if (!HaveNvrtc()) return;
  TempDir t;
  Options o = SaxpyOptions(t, t.WriteSaxpy());
  o.targets = {model::Target::kCuda};
  o.cuda_arch = "sm_80";
  std::string hash[2];
  for (bool lineinfo : {false, true}) {
    o.lineinfo = lineinfo;
    o.out_dir = t.path() + (lineinfo ? "/lines" : "/plain");
    diag::DiagnosticEngine d(diag::ReadSourceFile);
    Result<EmitResult> r = Emit(o, d);
    INFO(d.Render());
    REQUIRE(r.ok());
    hash[lineinfo] = r.value().content_hash;
    std::optional<std::string> ptx =
        ReadFile(o.out_dir + "/build/cuda/0_saxpy.compute_80.ptx");
    REQUIRE(ptx);
    CHECK((ptx->find("\t.loc\t") != std::string::npos) == lineinfo);
    CHECK((ptx->find("\t.file\t") != std::string::npos) == lineinfo);
    if (lineinfo) CHECK(ptx->find("saxpy.cu") != std::string::npos);
  }
  // The images stand for it in the content hash.
  CHECK(hash[0] != hash[1]);
}

}  // namespace
}  // namespace kernelc::driver

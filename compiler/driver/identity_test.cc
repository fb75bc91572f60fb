#include "compiler/driver/identity.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <catch2/catch.hpp>
#include <utility>
#include <variant>

#include "compiler/driver/analyze.h"
#include "compiler/driver/test_sources.h"

namespace kernelc::driver {
namespace {

using testing::TempDir;

// `o` with the option of `spec` given another value.
Options Changed(Options o, const OptionSpec& spec, const TempDir& t) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(std::declval<Options&>().*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          o.*member = !(o.*member);
        } else if constexpr (std::is_same_v<T, std::string>) {
          o.*member += "x";
        } else if constexpr (std::is_same_v<T, std::vector<model::Target>>) {
          o.*member = {model::Target::kCpu, model::Target::kCuda};
        } else if constexpr (!std::is_same_v<T, std::vector<std::string>>) {
          FAIL("an option of a new kind");
        } else if (member == &Options::sources) {
          // Another source, which can be read.
          o.*member = {t.Write("other/saxpy.cu", testing::kSaxpy)};
        } else if (member == &Options::include_dirs) {
          o.*member = {t.path() + "/other/inc"};
        } else {
          (o.*member).push_back("X=1");
        }
      },
      spec.member);
  return o;
}

std::string Key(const Options& o) {
  TargetUnits units = MakeTargetUnits(o.targets);
  return CacheKey(o, ToolchainIdentity(), units);
}

Options Base(const TempDir& t) {
  Options o;
  o.sources = {t.WriteSaxpy()};
  o.include_dirs = {t.path() + "/src/inc"};
  o.out_dir = t.path() + "/out";
  o.name = "saxpy";
  return o;
}

TEST_CASE(
    "Each option that the table keys changes the cache key, and no "
    "other does") {
  TempDir t;
  const Options base = Base(t);
  const std::string key = Key(base);
  REQUIRE(key.size() == 64);
  CHECK(Key(base) == key);
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    bool keyed = spec.identity.key != KeyUse::kNone;
    CHECK((Key(Changed(base, spec, t)) != key) == keyed);
  }
}

TEST_CASE(
    "The cache key changes with a source's contents and with the "
    "working directory") {
  TempDir t;
  const Options base = Base(t);
  const std::string key = Key(base);
  t.Write("src/saxpy.cu", std::string(testing::kSaxpy) + "// edited\n");
  CHECK(Key(base) != key);
  t.Write("src/saxpy.cu", testing::kSaxpy);
  CHECK(Key(base) == key);
  // Relative paths mean something else elsewhere.
  llvm::SmallString<256> cwd;
  REQUIRE(!llvm::sys::fs::current_path(cwd));
  REQUIRE(!llvm::sys::fs::set_current_path(t.path()));
  std::string elsewhere = Key(base);
  REQUIRE(!llvm::sys::fs::set_current_path(cwd));
  CHECK(elsewhere != key);
  CHECK(Key(base) == key);
  // A source that cannot be read: no key, and the build goes uncached.
  Options missing = base;
  missing.sources = {t.path() + "/missing.cu"};
  CHECK(Key(missing).empty());
}

TEST_CASE("The cache key starts from the toolchain's identity") {
  TempDir t;
  const Options o = Base(t);
  const std::string toolchain = ToolchainIdentity();
  REQUIRE(toolchain.size() == 64);
  CHECK(ToolchainIdentity() == toolchain);
  TargetUnits units = MakeTargetUnits(o.targets);
  const std::string key = CacheKey(o, toolchain, units);
  CHECK(key.size() == 64);
  CHECK(key != toolchain);
  CHECK(CacheKey(o, std::string(64, '0'), units) != key);
  // A toolchain that cannot be identified: no key.
  CHECK(CacheKey(o, "", units).empty());
}

TEST_CASE("The same sources elsewhere have another cache key") {
  TempDir a, b;
  CHECK(Key(Base(a)) != Key(Base(b)));
}

TEST_CASE(
    "Each option that the table hashes changes the content hash, and "
    "no other does") {
  TempDir t;
  const Options base = Base(t);
  model::Module m;
  diag::DiagnosticEngine d(diag::ReadSourceFile);
  TargetUnits units = MakeTargetUnits(base.targets);
  Result<sema::ModulePlan> plan = Analyze(base, &units, &m, d, nullptr);
  INFO(d.Render());
  REQUIRE(plan.ok());
  std::vector<std::string> source_paths = m.sources;
  OutputNames names(m);
  model::ForEachPath(m, [&names](std::string& p) { p = names.Name(p); });
  model::BuildInfo info;
  const BuiltModule built = {&m, &source_paths, &names, &info};
  auto hash = [&](const Options& o) {
    return ContentHash(o, built, MakeTargetUnits(o.targets));
  };
  const std::string base_hash = hash(base);
  REQUIRE(base_hash.size() == 64);
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    bool hashed = spec.identity.hash == HashUse::kValue ||
                  spec.identity.hash == HashUse::kOutputPath ||
                  spec.identity.hash == HashUse::kFileText;
    CHECK((hash(Changed(base, spec, t)) != base_hash) == hashed);
  }
  // The model and the sources' text are the build's own parts.
  t.Write("src/saxpy.cu", std::string(testing::kSaxpy) + "// edited\n");
  CHECK(hash(base) != base_hash);
  t.Write("src/saxpy.cu", testing::kSaxpy);
  m.kernels[0].name = "other";
  CHECK(hash(base) != base_hash);
}

}  // namespace
}  // namespace kernelc::driver

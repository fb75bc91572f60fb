#include "compiler/driver/options.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <variant>

#include "compiler/driver/version.h"
#include "compiler/emit/namer.h"

namespace kernelc::driver {
namespace {

using model::Target;

// The one diagnostic that `d` holds, as rendered.
std::string Reported(const diag::DiagnosticEngine& d) {
  CHECK(d.diagnostics().size() == 1);
  return d.Render();
}

TEST_CASE("ParseTargets reads names, sorted and each once") {
  diag::DiagnosticEngine d;
  CHECK(ParseTargets("cpu", d).value() == std::vector<Target>{Target::kCpu});
  CHECK(ParseTargets("cuda, cpu", d).value() ==
        std::vector<Target>{Target::kCpu, Target::kCuda});
  CHECK(ParseTargets("cuda,cuda", d).value() ==
        std::vector<Target>{Target::kCuda});
  CHECK(d.diagnostics().empty());
  for (const char* bad : {"tpu", "cpu,", ""}) {
    diag::DiagnosticEngine bad_d;
    Result<std::vector<Target>> r = ParseTargets(bad, bad_d);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kReported);
    CHECK(bad_d.error_count() == 1);
  }
  diag::DiagnosticEngine gpu;
  REQUIRE_FALSE(ParseTargets("cpu,gpu", gpu).ok());
  CHECK(Reported(gpu) ==
        "kernelc: error: unknown target 'gpu' (expected cpu or cuda)\n");
}

TEST_CASE("An option that needs a target is an error without it") {
  int needing = 0;
  for (const OptionSpec& spec : OptionTable()) {
    if (!spec.needs) continue;
    ++needing;
    INFO(spec.name);
    Options o;
    REQUIRE_FALSE(IsSet(o, spec));
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(std::declval<Options&>().*member)>;
          if constexpr (std::is_same_v<T, bool>)
            o.*member = true;
          else if constexpr (std::is_same_v<T, std::string>)
            o.*member = "sm_80";
          else
            FAIL("a target's option of a new kind");
        },
        spec.member);
    REQUIRE(IsSet(o, spec));
    diag::DiagnosticEngine d;
    Status s = CheckOptions(o, d);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().kind == ErrorKind::kReported);
    CHECK(Reported(d) == fmt::format("kernelc: error: {} needs the {} target\n",
                                     spec.name,
                                     model::TargetName(*spec.needs)));
    o.targets = {Target::kCpu, *spec.needs};
    diag::DiagnosticEngine none;
    CHECK(CheckOptions(o, none).ok());
    CHECK(none.diagnostics().empty());
  }
  CHECK(needing >= 2);  // --cuda-arch, --use-fast-math, ...
}

TEST_CASE("CheckOptions sorts the targets, and wants one") {
  Options o;
  o.targets = {Target::kCuda, Target::kCpu, Target::kCuda};
  diag::DiagnosticEngine d;
  REQUIRE(CheckOptions(o, d).ok());
  CHECK(o.targets == std::vector<Target>{Target::kCpu, Target::kCuda});
  o.targets.clear();
  REQUIRE_FALSE(CheckOptions(o, d).ok());
  CHECK(Reported(d) ==
        "kernelc: error: no target: build for cpu, cuda or both\n");
}

TEST_CASE("The package name defaults to the first source's stem") {
  Options o;
  o.sources = {"dir/saxpy.kernels.cu", "other.cu"};
  diag::DiagnosticEngine d;
  REQUIRE(ResolvePackageName(o, d).ok());
  CHECK(o.name == "saxpy");
  o.name = "2bad";
  REQUIRE_FALSE(ResolvePackageName(o, d).ok());
  CHECK(Reported(d) ==
        "kernelc: error: '2bad' is not a valid Python package name: use "
        "--name\n");
}

TEST_CASE("A package name may not shadow a module a JAX program imports") {
  CHECK_FALSE(ShadowedModule("saxpy").has_value());
  CHECK_FALSE(ShadowedModule("jax_ops").has_value());
  for (const char* name : {"os", "json", "random", "typing", "sys"})
    CHECK(ShadowedModule(name).value_or("").rfind(
              "a module of Python's standard library (Python 3.", 0) == 0);
  for (const char* name : {"jax", "jaxlib", "numpy", "scipy", "ml_dtypes",
                           "opt_einsum", "kernelc"})
    CHECK(ShadowedModule(name) ==
          fmt::format("'{}', which a JAX program imports", name));

  // A default name from the source's stem is checked as a given one.
  Options o;
  o.sources = {"dir/random.cu"};
  diag::DiagnosticEngine d;
  REQUIRE_FALSE(ResolvePackageName(o, d).ok());
  CHECK(Reported(d).rfind("kernelc: error: package name 'random' is the "
                          "name of a module of Python's standard library",
                          0) == 0);
}

TEST_CASE("Option values as the digests read them") {
  Options o;
  o.defines = {"A=1", "B"};
  o.targets = {Target::kCpu, Target::kCuda};
  for (const OptionSpec& spec : OptionTable()) {
    if (spec.name == "-D")
      CHECK(OptionValues(o, spec) == std::vector<std::string>{"A=1", "B"});
    if (spec.name == "--target")
      CHECK(OptionValues(o, spec) == std::vector<std::string>{"cpu", "cuda"});
    if (spec.name == "--no-cache")
      CHECK(OptionValues(o, spec) == std::vector<std::string>{"0"});
  }
}

TEST_CASE("The option table names each option once, and its identity") {
  std::set<std::string_view> names, fields;
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    CHECK(names.insert(spec.name).second);
    CHECK_FALSE(spec.help.empty());
    bool identity = spec.identity.key != KeyUse::kNone ||
                    spec.identity.hash != HashUse::kNone;
    // A part of the identity has a field name of its own.
    CHECK(identity != spec.identity.field.empty());
    if (identity) CHECK(fields.insert(spec.identity.field).second);
  }
  // Every command reads sources (or a package directory).
  const OptionSpec& src = OptionTable().front();
  CHECK(src.name == "SRC");
  for (Command c :
       {Command::kBuild, Command::kWheel, Command::kInspect, Command::kEmit})
    CHECK(src.commands.Has(c));
}

TEST_CASE("Every option has a keyword: a Python identifier, each once") {
  std::set<std::string> keywords;
  for (const OptionSpec& spec : OptionTable()) {
    std::string k = Keyword(spec);
    INFO(spec.name << " -> " << k);
    CHECK(emit::Namer::IsValidPackageName(k));
    CHECK(keywords.insert(k).second);
  }
  CHECK(keywords.count("cuda_arch"));
  CHECK(keywords.count("include_dirs"));
  CHECK(keywords.count("sources"));
}

TEST_CASE("The option table as JSON describes every option") {
  nlohmann::json j = nlohmann::json::parse(OptionTableJson());
  CHECK(j["version"] == kVersion);
  CHECK(j["cache_dir"].is_string());
  const nlohmann::json& options = j["options"];
  REQUIRE(options.size() == OptionTable().size());
  std::map<std::string, nlohmann::json> by_keyword;
  for (const nlohmann::json& o : options)
    by_keyword[o["keyword"].get<std::string>()] = o;
  CHECK(by_keyword["cuda_arch"]["name"] == "--cuda-arch");
  CHECK(by_keyword["cuda_arch"]["kind"] == "text");
  CHECK(by_keyword["cuda_arch"]["needs"] == "cuda");
  CHECK(by_keyword["use_fast_math"]["kind"] == "flag");
  CHECK(by_keyword["defines"]["name"] == "-D");
  CHECK(by_keyword["defines"]["kind"] == "list");
  CHECK(by_keyword["defines"]["path"] == false);
  CHECK(by_keyword["include_dirs"]["path"] == true);
  CHECK(by_keyword["target"]["kind"] == "targets");
  CHECK(by_keyword["target"]["needs"].is_null());
  CHECK(by_keyword["sources"]["required"] == true);
  CHECK(by_keyword["version"]["commands"] == nlohmann::json::array({"wheel"}));
  CHECK(by_keyword["no_cache"]["commands"] ==
        nlohmann::json::array({"build", "wheel"}));
}

}  // namespace
}  // namespace kernelc::driver

// kernelc: compiles annotated kernels into a Python package of JAX ops.
//
//   kernelc build SRC... -o OUTDIR [--name PKG] [--target cpu|cuda|cpu,cuda]
//       [--cuda-arch sm_80,sm_90] [--use-fast-math] [-I DIR] [-D N[=V]]
//       [--no-cache] [--cache-dir DIR]
//   kernelc wheel PKGDIR|SRC... -o DIST [--version V] [--platform TAG]
//       [--dist-name NAME] [--summary TEXT] [--requires REQ]...
//   kernelc inspect SRC... | PKGDIR
//   kernelc emit SRC... -o DIR       generated sources only
//   kernelc --print-options          the option table, as JSON
//
// Every command also takes -v/--verbose (progress lines on stderr, which a
// terminal gets without asking), -q/--quiet, and --json (the result on
// stdout as one JSON object, diagnostics in it: for programs such as the
// Python API).
//
// A thin shell over the driver library (compiler/driver): the options come
// from its table, the work from its pipelines. This file parses the command
// line, prints what a pipeline reports and returns, and maps its result to
// the exit code: 0 success, 1 errors in the user's input (diagnostics
// printed), 2 internal or toolchain failures.
//
// One diagnostics engine per run collects what the command line and the
// pipeline report; it is printed once, at the end: to stderr, or with
// --json into the result's object.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/driver/driver.h"
#include "compiler/driver/options.h"
#include "compiler/util/progress.h"

namespace kernelc {
namespace {

enum Exit { kOk = 0, kUserError = 1, kInternalError = 2 };

struct Subcommand {
  driver::Command command;
  const char* name;
  const char* help;
  CLI::App* app = nullptr;
};

// An option whose text the driver parses (--target): CLI11 collects the
// text, and a parse error is reported as kernelc reports errors.
struct TextOption {
  const driver::OptionSpec* spec = nullptr;
  std::string text;
  CLI::Option* option = nullptr;
};

// Declares `spec` on `cmd`, setting its member of `o`; a deque, since
// CLI11 keeps the text's address.
void Declare(CLI::App* cmd, const driver::OptionSpec& spec, driver::Options& o,
             std::deque<TextOption>& texts) {
  std::string name(spec.name), help(spec.help);
  CLI::Option* opt = std::visit(
      [&](auto member) -> CLI::Option* {
        using T = std::decay_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          return cmd->add_flag(name, o.*member, help);
        } else if constexpr (std::is_same_v<T, std::vector<model::Target>>) {
          TextOption& text = texts.emplace_back();
          text.spec = &spec;
          text.option = cmd->add_option(name, text.text, help);
          return text.option;
        } else {
          return cmd->add_option(name, o.*member, help);
        }
      },
      spec.member);
  if (spec.required) opt->required();
}

// How a command reports, besides its exit status.
struct Reporting {
  bool verbose = false;
  bool quiet = false;
  bool json = false;
};

// The progress lines: one per stage as it finishes, on stderr, when asked
// for or when stderr is a terminal (where a build that takes seconds would
// otherwise show nothing), never with --quiet.
std::unique_ptr<Progress> MakeProgress(const Reporting& r) {
  if (r.quiet || !(r.verbose || isatty(fileno(stderr)))) return nullptr;
  return std::make_unique<Progress>([](const ProgressEvent& e) {
    fmt::print(stderr, "kernelc: {:<13} {:<28} {:6.2f} s\n", e.stage, e.detail,
               e.seconds);
    std::fflush(stderr);
  });
}

nlohmann::json ToJson(const driver::BuildResult& r) {
  return {{"package", r.package},
          {"package_dir", r.package_dir},
          {"library", r.library},
          {"cache_hit", r.cache_hit},
          {"written", r.written}};
}
nlohmann::json ToJson(const driver::WheelResult& r) {
  return {{"path", r.path},
          {"build", r.build ? ToJson(*r.build) : nlohmann::json()}};
}
nlohmann::json ToJson(const driver::InspectResult& r) {
  return {{"json", r.json}};
}
nlohmann::json ToJson(const driver::EmitResult& r) {
  return {{"content_hash", r.content_hash}, {"written", r.written}};
}

// Prints a command's outcome: what was reported, then the internal error a
// pipeline stopped at, on stderr, and on success `print` of the result on
// stdout; or with --json one object on stdout:
//   {"ok": true, "result": {...}, "diagnostics": "..."}
//   {"ok": false, "error": {"kind": "user"|"internal", "message": ...},
//    "diagnostics": "..."}
// Returns the exit code.
int Finish(const Reporting& reporting, const diag::DiagnosticEngine& diags,
           const Status& status, const nlohmann::json& result = nullptr,
           const std::function<void()>& print = nullptr) {
  const bool internal =
      !status.ok() && status.error().kind == ErrorKind::kInternal;
  std::string text = diags.Render();
  if (internal)
    text +=
        fmt::format("kernelc: internal error: {}\n", status.error().message);
  if (reporting.json) {
    nlohmann::json j = {{"ok", status.ok()}, {"diagnostics", text}};
    if (status.ok())
      j["result"] = result;
    else
      j["error"] = {{"kind", internal ? "internal" : "user"},
                    {"message", status.error().message}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(stderr, "{}", text);
    if (status.ok() && print) print();
  }
  if (status.ok()) return kOk;
  return internal ? kInternalError : kUserError;
}

template <typename T, typename Print>
int Finish(const Reporting& reporting, const diag::DiagnosticEngine& diags,
           const Result<T>& result, Print print) {
  if (!result.ok()) return Finish(reporting, diags, result.status());
  return Finish(reporting, diags, Status(), ToJson(result.value()),
                [&] { print(result.value()); });
}

int Main(int argc, char** argv) {
  CLI::App app{"kernelc: compiles annotated CUDA/C++ kernels into JAX ops",
               "kernelc"};
  app.set_version_flag("--version", driver::VersionText,
                       "print kernelc's version and the NVRTC it uses");
  bool print_options = false;
  app.add_flag("--print-options", print_options,
               "print the option table as JSON (for front ends such as the "
               "Python API) and exit");
  app.require_subcommand(0, 1);
  Subcommand subcommands[] = {
      {driver::Command::kBuild, "build",
       "compile kernels into an importable Python package OUTDIR/PKG"},
      {driver::Command::kWheel, "wheel",
       "package a built package directory (or sources, built first) as a "
       "wheel in DIST"},
      {driver::Command::kInspect, "inspect",
       "print the kernel model as canonical JSON; for a built package "
       "directory, its manifest (targets, CUDA architectures, binary "
       "hashes)"},
      {driver::Command::kEmit, "emit",
       "write the generated sources (package/ and build/) to DIR without "
       "compiling them"},
  };
  diag::DiagnosticEngine diags(diag::ReadSourceFile);
  driver::Options o;
  std::deque<TextOption> texts;
  Reporting reporting;
  for (Subcommand& sub : subcommands) {
    sub.app = app.add_subcommand(sub.name, sub.help);
    sub.app->add_flag("-v,--verbose", reporting.verbose,
                      "print each stage with its time on stderr (the "
                      "default where stderr is a terminal)");
    sub.app->add_flag("-q,--quiet", reporting.quiet, "print no progress");
    sub.app->add_flag("--json", reporting.json,
                      "print the result and the diagnostics as one JSON "
                      "object on stdout");
  }
  for (const driver::OptionSpec& spec : driver::OptionTable())
    for (Subcommand& sub : subcommands)
      if (spec.commands.Has(sub.command)) Declare(sub.app, spec, o, texts);

  // CLI11 would only say that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const Subcommand& sub : subcommands)
      known = known || std::string_view(argv[1]) == sub.name;
    if (!known) {
      diags.Report<diag::Id::kUnknownCommand>({}, argv[1]);
      return Finish(Reporting(), diags, Error::Reported());
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // As every other error: "kernelc: error: ...".
    diags.Report<diag::Id::kCommandLine>({}, e.what());
    return Finish(Reporting(), diags, Error::Reported());
  }
  // An empty --name would silently become the default name.
  for (const Subcommand& sub : subcommands) {
    const CLI::Option* name = sub.app->get_option_no_throw("--name");
    if (sub.app->parsed() && name != nullptr && name->count() > 0 &&
        o.name.empty()) {
      diags.Report<diag::Id::kEmptyPackageName>({});
      return Finish(reporting, diags, Error::Reported());
    }
  }
  if (print_options) {
    fmt::print("{}", driver::OptionTableJson());
    return kOk;
  }
  if (app.get_subcommands().empty()) {
    diags.Report<diag::Id::kNoCommand>({});
    return Finish(Reporting(), diags, Error::Reported());
  }
  for (const TextOption& text : texts) {
    if (text.option->count() == 0) continue;
    Result<std::vector<model::Target>> targets =
        driver::ParseTargets(text.text, diags);
    if (!targets.ok()) return Finish(reporting, diags, targets.status());
    o.*std::get<std::vector<model::Target> driver::Options::*>(
           text.spec->member) = std::move(targets).value();
  }

  std::unique_ptr<Progress> progress = MakeProgress(reporting);
  Progress* p = progress.get();
  auto nothing = [](const auto&) {};
  if (subcommands[0].app->parsed())
    return Finish(reporting, diags, driver::Build(o, diags, p), nothing);
  if (subcommands[1].app->parsed())
    return Finish(
        reporting, diags, driver::Wheel(o, diags, p),
        [](const driver::WheelResult& r) { fmt::print("{}\n", r.path); });
  if (subcommands[2].app->parsed())
    return Finish(
        reporting, diags, driver::Inspect(o, diags),
        [](const driver::InspectResult& r) { fmt::print("{}", r.json); });
  return Finish(reporting, diags, driver::Emit(o, diags), nothing);
}

}  // namespace
}  // namespace kernelc

int main(int argc, char** argv) {
  // Errors are results, not exceptions; this is the last resort for one
  // that a library throws all the same (allocation failure, a JSON writer
  // refusing its input). The scratch directories are gone by the time it
  // arrives here: unwinding ran their destructors.
  try {
    return kernelc::Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kernelc: internal error: {}\n", e.what());
  } catch (...) {
    fmt::print(stderr, "kernelc: internal error: an unknown exception\n");
  }
  return kernelc::kInternalError;
}

// kernelc: compiles annotated kernels into a Python package of JAX ops.
//
//   kernelc build SRC... -o OUTDIR [--name PKG] [--target cpu|cuda|cpu,cuda]
//       [--cuda-arch sm_80,sm_90] [--use-fast-math] [-I DIR] [-D N[=V]]
//       [--no-cache] [--cache-dir DIR]
//   kernelc wheel PKGDIR|SRC... -o DIST [--version V] [--platform TAG]
//   kernelc inspect SRC... | PKGDIR
//   kernelc emit SRC... -o DIR       generated sources only
//
// A thin shell over the driver library (compiler/driver): the options come
// from its table, the work from its pipelines. This file parses the command
// line, prints what a pipeline reports and returns, and maps its result to
// the exit code: 0 success, 1 errors in the user's input (diagnostics
// printed), 2 internal or toolchain failures.
//
// One diagnostics engine per run collects what the command line and the
// pipeline report; it is printed once, at the end, to stderr.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <deque>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/driver/driver.h"
#include "compiler/driver/options.h"

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

// Prints what was reported, then the internal error a pipeline stopped at;
// the exit code.
int Finish(const diag::DiagnosticEngine& diags, const Status& status) {
  fmt::print(stderr, "{}", diags.Render());
  if (status.ok()) return kOk;
  if (status.error().kind != ErrorKind::kInternal) return kUserError;
  fmt::print(stderr, "kernelc: internal error: {}\n", status.error().message);
  return kInternalError;
}

int Main(int argc, char** argv) {
  CLI::App app{"kernelc: compiles annotated CUDA/C++ kernels into JAX ops",
               "kernelc"};
  app.set_version_flag("--version", driver::VersionText,
                       "print kernelc's version and the NVRTC it uses");
  app.require_subcommand(1);
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
  for (Subcommand& sub : subcommands)
    sub.app = app.add_subcommand(sub.name, sub.help);
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
      return Finish(diags, Error::Reported());
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
    return Finish(diags, Error::Reported());
  }
  // An empty --name would silently become the default name.
  for (const Subcommand& sub : subcommands) {
    const CLI::Option* name = sub.app->get_option_no_throw("--name");
    if (sub.app->parsed() && name != nullptr && name->count() > 0 &&
        o.name.empty()) {
      diags.Report<diag::Id::kEmptyPackageName>({});
      return Finish(diags, Error::Reported());
    }
  }
  for (const TextOption& text : texts) {
    if (text.option->count() == 0) continue;
    Result<std::vector<model::Target>> targets =
        driver::ParseTargets(text.text, diags);
    if (!targets.ok()) return Finish(diags, targets.status());
    o.*std::get<std::vector<model::Target> driver::Options::*>(
           text.spec->member) = std::move(targets).value();
  }

  if (subcommands[0].app->parsed())
    return Finish(diags, driver::Build(o, diags).status());
  if (subcommands[1].app->parsed()) {
    Result<driver::WheelResult> r = driver::Wheel(o, diags);
    int rc = Finish(diags, r.status());
    if (r.ok()) fmt::print("{}\n", r.value().path);
    return rc;
  }
  if (subcommands[2].app->parsed()) {
    Result<driver::InspectResult> r = driver::Inspect(o, diags);
    int rc = Finish(diags, r.status());
    if (r.ok()) fmt::print("{}", r.value().json);
    return rc;
  }
  return Finish(diags, driver::Emit(o, diags).status());
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

// kernelc's options: one type that every front end fills (the command
// line, the Bazel rule through it, and in-process front ends), and one
// table that declares each option once: its spelling on the command line,
// its help, the commands that accept it, the member it sets, the target it
// needs, and how it enters the build's identity (identity.h). The command
// line declares its options by walking the table, and the build's two
// digests read the table, so adding an option is adding an entry.
#ifndef KERNELC_COMPILER_DRIVER_OPTIONS_H_
#define KERNELC_COMPILER_DRIVER_OPTIONS_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/target.h"
#include "compiler/util/status.h"

namespace kernelc::driver {

enum class Command { kBuild, kWheel, kInspect, kEmit };

// The commands an option is accepted by.
class CommandSet {
 public:
  constexpr CommandSet(std::initializer_list<Command> commands) {
    for (Command c : commands) bits_ |= Bit(c);
  }
  constexpr bool Has(Command c) const { return (bits_ & Bit(c)) != 0; }

 private:
  static constexpr unsigned Bit(Command c) {
    return 1u << static_cast<unsigned>(c);
  }
  unsigned bits_ = 0;
};

struct Options {
  // Annotated .cu/.cc sources or JSON specs; for `wheel` and `inspect`,
  // also one package directory that `build` wrote.
  std::vector<std::string> sources;
  std::string out_dir;
  std::string name;  // the package; empty: the first source's stem
  std::vector<model::Target> targets = {model::Target::kCpu};
  std::string cuda_arch;  // "sm_80,sm_90"; empty: the cuda target's default
  bool use_fast_math = false;
  bool lineinfo = false;             // line information in the CUDA binaries
  std::vector<std::string> defines;  // "NAME" or "NAME=VALUE"
  std::vector<std::string> include_dirs;  // as given
  bool no_cache = false;
  std::string cache_dir;  // empty: cache::DefaultDirectory()
  std::string wheel_version = "0.0.0";  // PEP 440
  // A platform tag; empty: the widest manylinux tag the library allows.
  std::string platform;
  std::string distribution;  // the wheel's distribution; empty: `name`
  std::string summary;       // the wheel's summary; empty: kernelc's
  std::vector<std::string> requirements;  // more Requires-Dist (PEP 508)
};

// How a part of a build's identity enters the build cache's key, which
// tells this machine's builds apart: any two builds here that could give
// different bytes must get different keys.
enum class KeyUse {
  kNone,   // not at all: it does not change the package
  kValue,  // each value as it is
  // Each value, a path, as given and made absolute: what a relative path
  // means depends on the working directory.
  kPath,
  // Each value names a file: its absolute path and its contents' SHA-256.
  // A file that cannot be read leaves the build uncached.
  kFileContents,
  // Each value names a tool, identified without reading or running it: its
  // path, real path, size and modification time (as ccache identifies a
  // compiler). A tool that is not there leaves the build uncached.
  kFileIdentity,
};

// How it enters the content hash, which names the package's library and
// symbols: the same sources and options give the same hash wherever they
// are built, so nothing of the machine may enter.
enum class HashUse {
  kNone,        // not at all
  kValue,       // each value as it is
  kOutputPath,  // each value, a path, as the output names it (OutputNames)
  // Each value names a file: its text, under the file's output name.
  kFileText,
  // Not itself, but through what it shapes, which the hash holds: the
  // model, the CUDA images.
  kIndirect,
};

// One part of a build's identity: its field name in both digests, and how
// it enters each.
struct Identity {
  std::string_view field;
  KeyUse key = KeyUse::kNone;
  HashUse hash = HashUse::kNone;
};

using OptionMember = std::variant<std::string Options::*, bool Options::*,
                                  std::vector<std::string> Options::*,
                                  std::vector<model::Target> Options::*>;

struct OptionSpec {
  // On the command line: "--target", "-I"; a name without a leading dash
  // is positional ("SRC").
  std::string_view name;
  std::string_view help;
  CommandSet commands;
  OptionMember member;
  Identity identity;
  // A target that the build must include when the option is set.
  std::optional<model::Target> needs = std::nullopt;
  bool required = false;  // by every command that accepts it
  // Its name as a keyword argument of in-process front ends (the Python
  // API), where the command line's is not one: empty for the long name
  // without its dashes, with '_' for '-' ("--cuda-arch": cuda_arch).
  std::string_view keyword = {};
};

// Every option, in the order the command line lists them and the digests
// take them.
const std::vector<OptionSpec>& OptionTable();

// `spec`'s keyword argument name (OptionSpec::keyword).
std::string Keyword(const OptionSpec& spec);

// The option table as JSON, for front ends in other languages that map
// their arguments onto the command line (the Python API): kernelc's
// version, the default cache directory, and for each option its name,
// keyword, help, commands, kind ("flag", "text", "list" or "targets"),
// whether its values are paths (relative to the working directory), the
// target it needs and whether it is required.
std::string OptionTableJson();

// Whether `spec`'s member holds something other than its default: a
// non-empty string or list, or a true flag. (Targets are always set.)
bool IsSet(const Options& o, const OptionSpec& spec);

// `spec`'s member as text, for the digests: a string as it is, a flag as
// "1" or "0", each element of a list, targets by name.
std::vector<std::string> OptionValues(const Options& o, const OptionSpec& spec);

// Parses --target: comma-separated target names, sorted and each once. An
// unknown name is reported to `diags` (Error::Reported()).
Result<std::vector<model::Target>> ParseTargets(std::string_view text,
                                                diag::DiagnosticEngine& diags);

// Checks the options of a command that reads sources, and sorts the
// targets (each once), as ParseTargets gives them. No target, or an option
// that needs a target the build lacks ("--cuda-arch needs the cuda
// target"), is reported to `diags` (Error::Reported()).
Status CheckOptions(Options& o, diag::DiagnosticEngine& diags);

// Fills in the default package name (the first source's stem, up to its
// first dot) and checks that the name is a Python package name that shadows
// no module (ShadowedModule); reports it to `diags` when it is not.
Status ResolvePackageName(Options& o, diag::DiagnosticEngine& diags);

// What a package named `name` would shadow, in words: a top-level module of
// Python's standard library (as sys.stdlib_module_names of the Python that
// built kernelc lists them), or a module of the world every op is imported
// in (jax, the distributions jax requires, kernelc); nullopt for none.
std::optional<std::string> ShadowedModule(std::string_view name);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_OPTIONS_H_

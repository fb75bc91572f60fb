#include "compiler/driver/identity.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "compiler/backends/host_backend.h"
#include "compiler/cache/build_cache.h"
#include "compiler/driver/embedded_generator_sources.h"
#include "compiler/driver/paths.h"
#include "compiler/driver/version.h"
#include "compiler/frontend/frontend.h"
#include "compiler/model/json.h"
#include "compiler/util/file_io.h"
#include "runtime/embedded_archives.h"
#include "runtime/embedded_headers.h"
#include "runtime/embedded_python.h"
#include "runtime/embedded_runtime_sources.h"
#include "runtime/embedded_xla_ffi.h"
#include "templates/embedded_templates.h"

namespace kernelc::driver {

namespace {

// A part's values; nullopt when they cannot be read.
using Values = std::optional<std::vector<std::string>>;

// What the parts read: the options, and (for the content hash only) the
// built module.
struct Inputs {
  const Options& options;
  const BuiltModule* built = nullptr;
};

struct Fact {
  Identity identity;
  Values (*values)(const Inputs& in);
};

Values One(std::string value) {
  return std::vector<std::string>{std::move(value)};
}

// A digest of every file compiled into kernelc that shapes a package: the
// templates, the Python runtime, kernelc's headers, the block executor and
// the archive it links, the XLA FFI headers and the sources of the emitters
// (whose snippets are code), since a kernelc rebuilt with other ones keeps
// its version string. Computed once per process (some 300 KB of SHA-256,
// about a millisecond), for the content hash; only a build that misses the
// cache computes it.
const std::string& EmbeddedFilesDigest() {
  static const std::string digest = [] {
    cache::KeyBuilder key;
    const std::pair<const char*, const std::vector<EmbeddedFile>*> sets[] = {
        {"templates", &embedded::Templates()},
        {"python-runtime", &embedded::PythonRuntime()},
        {"headers", &embedded::UserHeaders()},
        {"runtime-sources", &embedded::RuntimeSources()},
        {"archives", &embedded::Archives()},
        {"xla-ffi", &embedded::XlaFfiHeaders()},
        {"generator-sources", &embedded::GeneratorSources()}};
    for (const auto& [set, files] : sets) {
      key.Add("set", set);
      for (const EmbeddedFile& f : *files) {
        key.Add("path", f.path);
        key.Add("contents", f.contents);
      }
    }
    return key.Finish();
  }();
  return digest;
}

// kernelc and the toolchain, before the options.
const Fact kToolchain[] = {
    {{"kernelc", KeyUse::kValue, HashUse::kValue},
     [](const Inputs&) { return One(kVersion); }},
    // The key has kernelc's executable instead, which is cheaper to
    // identify than the embedded files are to hash.
    {{"kernelc-embedded-files", KeyUse::kNone, HashUse::kValue},
     [](const Inputs&) { return One(EmbeddedFilesDigest()); }},
    // kernelc by identity, like the host compiler below: a kernelc rebuilt
    // with other emitters, templates or headers keeps its version string.
    // The hash, which must not depend on the machine, has the embedded
    // files' digest instead.
    {{"kernelc-executable", KeyUse::kFileIdentity, HashUse::kNone},
     [](const Inputs&) { return One("/proc/self/exe"); }},
    {{"clang", KeyUse::kValue, HashUse::kValue},
     [](const Inputs&) { return One(frontend::ClangVersion()); }},
    {{"jaxlib-headers", KeyUse::kValue, HashUse::kValue},
     [](const Inputs&) { return One(kJaxlibFloor); }},
    // The hash has the headers themselves among the embedded files.
    {{"ffi-api", KeyUse::kValue, HashUse::kNone},
     [](const Inputs&) { return One(kFfiApi); }},
    // The host compiler, which compiles and links every package's library,
    // by identity without running it.
    {{"cxx", KeyUse::kFileIdentity, HashUse::kNone},
     [](const Inputs&) -> Values {
       std::string cxx = backends::HostCompilerFile();
       if (cxx.empty()) return std::nullopt;
       return One(cxx);
     }},
    // Where the Clang inside kernelc finds its headers and libraries (which
    // a distribution installs beside kernelc's executable): what its
    // precompiled headers were made from.
    {{"clang-root", KeyUse::kValue, HashUse::kNone},
     [](const Inputs&) -> Values {
       backends::ClangRoot root = backends::FindClangRoot();
       return std::vector<std::string>{root.clang, root.resource_dir,
                                       root.sysroot};
     }},
};

// What the sources hold and where they are read, after the options.
const Fact kSources[] = {
    // Where relative paths point: quoted includes resolve beside each
    // source, and a JSON spec names its kernels' sources relative to the
    // working directory; the cache entries' recorded headers are absolute
    // paths.
    {{"cwd", KeyUse::kValue, HashUse::kNone},
     [](const Inputs&) -> Values {
       llvm::SmallString<256> cwd;
       if (llvm::sys::fs::current_path(cwd)) return std::nullopt;
       return One(std::string(cwd));
     }},
    // The key has the sources (SRC) it is computed from instead.
    {{"model", KeyUse::kNone, HashUse::kValue},
     [](const Inputs& in) {
       return One(model::ToCanonicalJson(*in.built->module));
     }},
    // Every source of the model, also those a JSON spec names.
    {{"source-text", KeyUse::kNone, HashUse::kFileText},
     [](const Inputs& in) -> Values { return *in.built->source_paths; }},
    // The headers the sources include, by their text alone, sorted: where
    // they lie is the machine's (an include directory anywhere). An edited
    // header gives the library and its symbols new names, as an edited
    // source does, so a process that loaded the old package can load the
    // new one beside it. The key has them in each cache entry instead.
    {{"header-text", KeyUse::kNone, HashUse::kValue},
     [](const Inputs& in) -> Values {
       std::vector<std::string> digests;
       if (in.built->headers == nullptr) return digests;
       for (const std::string& h : *in.built->headers)
         digests.push_back(cache::Sha256Hex(ReadFile(h).value_or("")));
       std::sort(digests.begin(), digests.end());
       return digests;
     }},
};

struct Part {
  Identity identity;
  std::function<Values()> values;
};

// The parts of the identity in the order both digests take them: kernelc
// and the toolchain, then the build's own: the options in the table's
// order, then the sources. The targets' parts come last, from their units.
std::vector<Part> ToolchainParts(const Inputs& in) {
  std::vector<Part> parts;
  for (const Fact& f : kToolchain)
    parts.push_back({f.identity, [&in, &f] { return f.values(in); }});
  return parts;
}

std::vector<Part> BuildParts(const Inputs& in) {
  std::vector<Part> parts;
  for (const OptionSpec& spec : OptionTable())
    parts.push_back({spec.identity, [&in, &spec]() -> Values {
                       return OptionValues(in.options, spec);
                     }});
  for (const Fact& f : kSources)
    parts.push_back({f.identity, [&in, &f] { return f.values(in); }});
  return parts;
}

// Adds `parts` to a key as each one's KeyUse says; false when one cannot
// be read or identified.
bool AddToKey(const std::vector<Part>& parts, cache::KeyBuilder& key) {
  for (const Part& part : parts) {
    const Identity& id = part.identity;
    if (id.key == KeyUse::kNone) continue;
    Values values = part.values();
    if (!values) return false;
    for (const std::string& v : *values) {
      switch (id.key) {
        case KeyUse::kNone:
          break;
        case KeyUse::kValue:
          key.Add(id.field, v);
          break;
        case KeyUse::kPath:
          key.Add(id.field, v);
          key.Add(fmt::format("{}-abs", id.field), Absolute(v));
          break;
        case KeyUse::kFileContents:
          key.Add(fmt::format("{}-abs", id.field), Absolute(v));
          if (!key.AddFile(id.field, v)) return false;
          break;
        case KeyUse::kFileIdentity:
          if (!key.AddFileIdentity(id.field, v)) return false;
          break;
      }
    }
  }
  return true;
}

// The content hash's field encoding: "field:size:" and the value.
class ContentHasher {
 public:
  void Add(std::string_view field, std::string_view value) {
    h_.update(fmt::format("{}:{}:", field, value.size()));
    h_.update(llvm::StringRef(value.data(), value.size()));
  }
  std::string Finish() { return llvm::toHex(h_.final(), /*LowerCase=*/true); }

 private:
  llvm::SHA256 h_;
};

}  // namespace

std::string ToolchainIdentity() {
  const Options none;
  const Inputs in{none};
  cache::KeyBuilder key;
  if (!AddToKey(ToolchainParts(in), key)) return "";
  return key.Finish();
}

std::string CacheKey(const Options& o, const std::string& toolchain,
                     TargetUnits& units) {
  if (toolchain.empty()) return "";
  cache::KeyBuilder key;
  key.Add("cache-format", "3");
  key.Add("toolchain", toolchain);
  const Inputs in{o};
  if (!AddToKey(BuildParts(in), key)) return "";
  for (const std::unique_ptr<targets::TargetUnit>& unit : units)
    if (!unit->AddToCacheKey(key)) return "";
  return key.Finish();
}

std::string ContentHash(const Options& o, const BuiltModule& built,
                        const TargetUnits& units) {
  ContentHasher hash;
  Inputs in{o, &built};
  std::vector<Part> parts = ToolchainParts(in);
  for (Part& part : BuildParts(in)) parts.push_back(std::move(part));
  for (const Part& part : parts) {
    const Identity& id = part.identity;
    if (id.hash == HashUse::kNone || id.hash == HashUse::kIndirect) continue;
    Values values = part.values();
    for (const std::string& v : values.value_or(std::vector<std::string>())) {
      switch (id.hash) {
        case HashUse::kNone:
        case HashUse::kIndirect:
          break;
        case HashUse::kValue:
          hash.Add(id.field, v);
          break;
        case HashUse::kOutputPath:
          hash.Add(id.field, built.names->Name(v));
          break;
        case HashUse::kFileText:
          hash.Add(built.names->Name(v), ReadFile(v).value_or(""));
          break;
      }
    }
  }
  for (const std::unique_ptr<targets::TargetUnit>& unit : units)
    for (const auto& [field, value] : unit->ContentHashFields(*built.info))
      hash.Add(field, value);
  return hash.Finish();
}

}  // namespace kernelc::driver

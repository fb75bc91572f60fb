// The build cache: finished packages, content-addressed, so that a rebuild
// with nothing changed does no compiler work at all.
//
// It works like ccache's direct mode. The caller hashes everything it knows
// before compiling (sources, options, toolchain identity, kernelc's version)
// into a direct key. Each entry under that key also records the files the
// compile read (the headers the sources included, from the compiler's
// dependency output) with their SHA-256, and the toolchain's headers it may
// have read with their size and modification time; a lookup re-checks those
// files and returns the first entry whose files are all unchanged. So
// editing a header misses without any parse, and a hit never starts Clang.
//
// Layout: DIR/v1/<key[0:2]>/<key>/<entry>.kce, one file per entry, written
// to a temporary file and renamed into place: concurrent builds sharing DIR
// see whole entries or none, and two writers of the same entry write the
// same bytes. No entry is ever pruned (precompiled preludes are: see
// PreludeDirectory).
#ifndef KERNELC_COMPILER_CACHE_BUILD_CACHE_H_
#define KERNELC_COMPILER_CACHE_BUILD_CACHE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/util/status.h"

namespace kernelc::cache {

// Relative path -> bytes: the files of one built package.
using Files = std::map<std::string, std::string>;

// The cache directory when none is given: $KERNELC_CACHE_DIR, else
// $XDG_CACHE_HOME/kernelc, else ~/.cache/kernelc. Empty when none of these
// can be determined.
std::string DefaultDirectory();

// How many directories of precompiled preludes of other kernelc
// executables PreludeDirectory keeps.
inline constexpr int kKeptPreludeDirectories = 3;

// DIR/prelude/<identity>: where the precompiled preludes of kernelc's
// generated sources live for the kernelc and host compiler that `identity`
// (a hex SHA-256) names; nothing else uses them. Made when missing, and
// then the directories of other identities beside it are pruned: all but
// the kKeptPreludeDirectories most recently modified (made or added to)
// are removed, since each holds some 40 MB that only its own kernelc can
// use, and a kernelc rebuilt from source is another one. A kernelc whose
// preludes went makes them again when it next builds. Empty when the
// directory cannot be made: the build then compiles without preludes.
std::string PreludeDirectory(const std::string& cache_dir,
                             const std::string& identity);

// Hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view bytes);

// Whether `path` names a file inside a package directory: relative,
// '/'-separated, valid UTF-8, with no empty, "." or ".." component.
bool IsPackagePath(std::string_view path);

// Builds a direct key from named fields; the order of Add calls matters.
class KeyBuilder {
 public:
  KeyBuilder& Add(std::string_view field, std::string_view value);
  // Adds the file's path and contents; false (and adds a marker) when it
  // cannot be read.
  bool AddFile(std::string_view field, const std::string& path);
  // Adds a file's identity without reading it, as ccache identifies a
  // compiler: its path, real path, size and modification time. False (and
  // adds a marker) when it cannot be found.
  bool AddFileIdentity(std::string_view field, const std::string& path);
  std::string Finish();  // hex SHA-256

 private:
  std::string buffer_;
};

// Reads the dependency list of a Make-style .d file (as `clang -MMD -MF`
// writes it): every prerequisite, in order, with escapes undone.
std::vector<std::string> ParseDepFile(std::string_view text);

// The files a preprocessor may read when it compiles `files`, found without
// preprocessing, for a compiler that reports no dependencies (NVRTC): every
// #include and #include_next in them and in what they include, conditionals
// and comments ignored, each resolved against the including file's
// directory and against every directory of `search_path` (all matches, not
// the first only). So a superset of what a compile reads, except for
// includes that name a macro. Absolute paths without dots, sorted; `files`
// themselves among them.
std::vector<std::string> IncludeClosure(
    const std::vector<std::string>& files,
    const std::vector<std::string>& search_path);

class BuildCache {
 public:
  explicit BuildCache(std::string directory)
      : directory_(std::move(directory)) {}

  const std::string& directory() const { return directory_; }

  // The files of an entry under `key` whose recorded dependencies still
  // have the recorded contents; nullopt on a miss. Damaged entries are
  // misses, and so are entries with a file that IsPackagePath rejects.
  std::optional<Files> Lookup(const std::string& key) const;

  // Stores `files` under `key`, with the current contents of `dependencies`
  // and the current identity (size and modification time) of
  // `toolchain_files` (absolute paths). Toolchain files are checked like the
  // toolchain itself, by a stat rather than by reading them: headers that
  // come with a compiler, many and large, and edited far less often than
  // the user's. Paths of any bytes are recorded. An error when the
  // directory cannot be written, a dependency cannot be read or a file's
  // path fails IsPackagePath; the cache is then unchanged.
  Status Store(const std::string& key,
               const std::vector<std::string>& dependencies, const Files& files,
               const std::vector<std::string>& toolchain_files = {}) const;

 private:
  std::string KeyDirectory(const std::string& key) const;

  std::string directory_;
};

}  // namespace kernelc::cache

#endif  // KERNELC_COMPILER_CACHE_BUILD_CACHE_H_

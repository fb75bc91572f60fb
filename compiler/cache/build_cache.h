// The build cache: finished packages, content-addressed, so that a rebuild
// with nothing changed does no compiler work at all.
//
// It works like ccache's direct mode. The caller hashes everything it knows
// before compiling (sources, options, toolchain identity, kernelc's version)
// into a direct key. Each entry under that key also records the files the
// compile read (the headers the sources included, from the compiler's
// dependency output) with their SHA-256; a lookup re-hashes those files and
// returns the first entry whose files are all unchanged. So editing a header
// misses without any parse, and a hit never starts Clang.
//
// Layout: DIR/v1/<key[0:2]>/<key>/<entry>.kce, one file per entry, written
// to a temporary file and renamed into place: concurrent builds sharing DIR
// see whole entries or none, and two writers of the same entry write the
// same bytes. Nothing is ever pruned.
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

// Hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view bytes);

// Builds a direct key from named fields; the order of Add calls matters.
class KeyBuilder {
 public:
  KeyBuilder& Add(std::string_view field, std::string_view value);
  // Adds the file's path and contents; false (and adds a marker) when it
  // cannot be read.
  bool AddFile(std::string_view field, const std::string& path);
  std::string Finish();  // hex SHA-256

 private:
  std::string buffer_;
};

// Reads the dependency list of a Make-style .d file (as `clang -MMD -MF`
// writes it): every prerequisite, in order, with escapes undone.
std::vector<std::string> ParseDepFile(std::string_view text);

class BuildCache {
 public:
  explicit BuildCache(std::string directory)
      : directory_(std::move(directory)) {}

  const std::string& directory() const { return directory_; }

  // The files of an entry under `key` whose recorded dependencies still
  // have the recorded contents; nullopt on a miss. Damaged entries are
  // misses.
  std::optional<Files> Lookup(const std::string& key) const;

  // Stores `files` under `key`, with the current contents of `dependencies`
  // (absolute paths). An error when the directory cannot be written or a
  // dependency cannot be read; the cache is then unchanged.
  Status Store(const std::string& key,
               const std::vector<std::string>& dependencies,
               const Files& files) const;

 private:
  std::string KeyDirectory(const std::string& key) const;

  std::string directory_;
};

}  // namespace kernelc::cache

#endif  // KERNELC_COMPILER_CACHE_BUILD_CACHE_H_

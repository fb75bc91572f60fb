// Reading and writing whole files, for the driver and the backends (the
// emitters never touch the filesystem).
#ifndef KERNELC_COMPILER_UTIL_FILE_IO_H_
#define KERNELC_COMPILER_UTIL_FILE_IO_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/util/status.h"

namespace kernelc {

// The file's bytes; nullopt when it cannot be read (or is a directory).
std::optional<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path`, creating parent directories, unless the file
// already holds exactly these bytes (then it is left untouched, mtime
// included). Writes through a temporary file of a unique name beside it
// (".NAME.kernelc-tmp-XXXXXXXX") and a rename, so a reader never sees half a
// file and writers at the same time do not collide. Failures are user errors
// naming the path, and leave neither the temporary file nor a directory
// this created.
Status WriteFileIfChanged(const std::string& path, std::string_view contents);

// Writes `files` (relative path -> bytes) under `dir` as one change, as far
// as a file system allows: every changed file is first written to its
// temporary file, and only when all are written are they renamed into
// place. A failure before the renames (a full disk, a directory where a
// file must go, no permission) leaves every file as it was. Otherwise as
// WriteFileIfChanged. When set, `written` receives the relative paths of
// the files whose contents changed, those it wrote, in `files`' order.
Status WriteFilesIfChanged(const std::string& dir,
                           const std::map<std::string, std::string>& files,
                           std::vector<std::string>* written = nullptr);

// Makes `path` by `make`, which writes a file at the path it is given: a
// temporary one of a unique name beside `path` (".NAME.kernelc-tmp-
// XXXXXXXX"), renamed into place once `make` succeeds, so that a reader
// never sees half a file and writers at the same time do not collide. For
// files that a tool writes (a precompiled header). False, with no
// temporary file left, when `make` fails or the rename does.
bool MakeFileInPlace(const std::string& path,
                     const std::function<bool(const std::string& temp)>& make);

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_FILE_IO_H_

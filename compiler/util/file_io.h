// Reading and writing whole files, for the driver and the backends (the
// emitters never touch the filesystem).
#ifndef KERNELC_COMPILER_UTIL_FILE_IO_H_
#define KERNELC_COMPILER_UTIL_FILE_IO_H_

#include <optional>
#include <string>
#include <string_view>

#include "compiler/util/status.h"

namespace kernelc {

// The file's bytes; nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path`, creating parent directories, unless the file
// already holds exactly these bytes (then it is left untouched, mtime
// included). Writes through a temporary file and a rename, so a reader never
// sees half a file. Failures are user errors naming the path.
Status WriteFileIfChanged(const std::string& path, std::string_view contents);

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_FILE_IO_H_

// A file compiled into the kernelc binary (headers, templates), so that the
// compiler is one self-contained executable.
#ifndef KERNELC_TOOLS_EMBEDDED_FILE_H_
#define KERNELC_TOOLS_EMBEDDED_FILE_H_

#include <string_view>

namespace kernelc {

struct EmbeddedFile {
  std::string_view path;  // relative, '/'-separated, e.g. "include/kernelc.h"
  std::string_view contents;
};

}  // namespace kernelc

#endif  // KERNELC_TOOLS_EMBEDDED_FILE_H_

#include "compiler/diag/diagnostic.h"

#include <fmt/format.h>

namespace kernelc::diag {

std::string SourceLoc::ToString() const {
  if (file.empty()) return "";
  if (!has_position()) return file;
  return fmt::format("{}:{}:{}", file, line, col);
}

const std::string* Excerpt::Line(int n) const {
  int i = n - first_line;
  if (i < 0 || i >= static_cast<int>(lines.size())) return nullptr;
  return &lines[i];
}

}  // namespace kernelc::diag

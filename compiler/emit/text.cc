#include "compiler/emit/text.h"

#include <fmt/format.h>

namespace kernelc::emit {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return out + "\"";
}

std::string Escape(std::string_view s) {
  std::string q = Quote(s);
  return q.substr(1, q.size() - 2);
}

std::string ParamLines(const std::vector<std::string>& params) {
  if (params.empty()) return std::string();
  return fmt::format("\n    {}", fmt::join(params, ",\n    "));
}

std::string PyTuple(const std::vector<std::string>& items) {
  return items.size() == 1 ? fmt::format("({},)", items[0])
                           : fmt::format("({})", fmt::join(items, ", "));
}

std::string Stem(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(base.substr(0, base.find('.')));
}

}  // namespace kernelc::emit

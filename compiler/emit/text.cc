#include "compiler/emit/text.h"

#include <fmt/format.h>

#include <cctype>

#include "compiler/util/quote.h"

namespace kernelc::emit {

std::string Quote(std::string_view s) {
  return "\"" + EscapeForLiteral(s) + "\"";
}

std::string Escape(std::string_view s) { return EscapeForLiteral(s); }

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
  std::string stem(base.substr(0, base.find('.')));
  // A generated file's name carries it: only characters that every tool
  // and directive takes as they are.
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      c = '_';
  return stem;
}

}  // namespace kernelc::emit

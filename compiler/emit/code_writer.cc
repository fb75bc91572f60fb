#include "compiler/emit/code_writer.h"

#include <fmt/format.h>

#include <set>

#include "templates/embedded_templates.h"

namespace kernelc::emit {

std::string Indent(std::string_view text, std::string_view indent) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty()) {
      out += indent;
      out += line;
    }
    if (nl != std::string_view::npos) out += '\n';
    pos = end + 1;
  }
  return out;
}

Result<std::string> Fill(std::string_view name, std::string_view tmpl,
                         const Vars& vars) {
  std::string out;
  std::set<std::string> used;
  size_t line_start = 0;  // in `out`
  size_t i = 0;
  while (i < tmpl.size()) {
    char c = tmpl[i];
    if (c != '$') {
      out += c;
      if (c == '\n') line_start = out.size();
      ++i;
      continue;
    }
    size_t close = tmpl.find('$', i + 1);
    if (close == std::string_view::npos)
      return Error::Internal(
          fmt::format("template {}: unterminated '$'", name));
    std::string key(tmpl.substr(i + 1, close - i - 1));
    i = close + 1;
    if (key.empty()) {
      out += '$';
      continue;
    }
    auto it = vars.find(key);
    if (it == vars.end())
      return Error::Internal(
          fmt::format("template {}: no value for ${}$", name, key));
    used.insert(key);
    std::string_view value = it->second;
    // Re-indent continuation lines when the placeholder starts its line.
    std::string prefix = out.substr(line_start);
    bool alone = prefix.find_first_not_of(' ') == std::string::npos;
    if (alone && value.find('\n') != std::string_view::npos) {
      size_t first_nl = value.find('\n');
      out += value.substr(0, first_nl + 1);
      std::string rest = Indent(value.substr(first_nl + 1), prefix);
      // A trailing newline in the value ends the placeholder's line; the
      // template's own newline after it would double it.
      out += rest;
      if (!value.empty() && value.back() == '\n' && i < tmpl.size() &&
          tmpl[i] == '\n')
        ++i;
    } else {
      out += value;
      if (!value.empty() && value.back() == '\n' && alone && i < tmpl.size() &&
          tmpl[i] == '\n')
        ++i;
    }
    size_t nl = out.rfind('\n');
    line_start = nl == std::string::npos ? 0 : nl + 1;
  }
  for (const auto& [key, value] : vars)
    if (!used.count(key))
      return Error::Internal(
          fmt::format("template {}: value ${}$ is not used", name, key));
  return out;
}

Result<std::string_view> Template(std::string_view name) {
  for (const EmbeddedFile& f : embedded::Templates())
    if (f.path == name) return f.contents;
  return Error::Internal(fmt::format("no template named '{}'", name));
}

Result<std::string> FillTemplate(std::string_view name, const Vars& vars) {
  Result<std::string_view> t = Template(name);
  if (!t.ok()) return t.error();
  return Fill(name, t.value(), vars);
}

}  // namespace kernelc::emit

#include "compiler/emit/printer.h"

#include <fmt/format.h>

#include "templates/embedded_templates.h"

namespace kernelc::emit {

namespace {

// A raw-string snippet as it is meant (see the header): `body` is what
// follows the opening newline. nullopt when a line is indented less than
// the first, which would lose text.
std::optional<std::string> Trim(std::string_view body) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (true) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.push_back(body.substr(pos));
      break;
    }
    lines.push_back(body.substr(pos, nl - pos));
    pos = nl + 1;
  }
  auto blank = [](std::string_view line) {
    return line.find_first_not_of(' ') == std::string_view::npos;
  };
  // The closing delimiter's line; a snippet without a last newline keeps
  // its last line.
  bool ends_line = lines.size() > 1 && blank(lines.back());
  if (ends_line) lines.pop_back();
  size_t margin = std::string_view::npos;
  for (std::string_view line : lines)
    if (!blank(line)) {
      margin = line.find_first_not_of(' ');
      break;
    }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!blank(line)) {
      if (line.find_first_not_of(' ') < margin) return std::nullopt;
      out += line.substr(margin);
    }
    if (i + 1 < lines.size() || ends_line) out += '\n';
  }
  return out;
}

std::string Where(const Printer::Location& where) {
  return fmt::format("{}:{}", where.file, where.line);
}

}  // namespace

void Printer::Emit(const Subs& subs, std::string_view format, Location where) {
  if (!ok()) return;
  if (!format.empty() && format.front() == '\n') {
    std::optional<std::string> trimmed = Trim(format.substr(1));
    if (!trimmed) {
      Fail(Error::Internal(
          fmt::format("snippet at {}: a line is indented less than the first",
                      Where(where))));
      return;
    }
    Substitute(*trimmed, subs, "snippet at " + Where(where));
    return;
  }
  Substitute(format, subs, "snippet at " + Where(where));
}

void Printer::Emit(std::string_view format, Location where) {
  Emit(Subs(), format, where);
}

void Printer::EmitTemplate(std::string_view name, const Subs& subs) {
  if (!ok()) return;
  for (const EmbeddedFile& f : embedded::Templates())
    if (f.path == name) {
      Substitute(f.contents, subs, fmt::format("template {}", name));
      return;
    }
  Fail(Error::Internal(fmt::format("no template named '{}'", name)));
}

void Printer::Fail(Error error) {
  if (ok()) error_ = std::move(error);
}

Result<std::string> Printer::Finish() const {
  if (!ok()) return *error_;
  return out_;
}

size_t Printer::Column() const {
  return out_.size() == line_start_ ? indent_ : out_.size() - line_start_;
}

bool Printer::LineIsBlank() const {
  return out_.find_first_not_of(' ', line_start_) == std::string::npos;
}

void Printer::Write(std::string_view text) {
  for (char c : text) {
    if (c == '\n') {
      out_ += c;
      line_start_ = out_.size();
      continue;
    }
    if (out_.size() == line_start_) out_.append(indent_, ' ');
    out_ += c;
  }
}

void Printer::Substitute(std::string_view format, const Subs& subs,
                         const std::string& where) {
  std::vector<bool> used(subs.size());
  size_t i = 0;
  while (i < format.size() && ok()) {
    size_t dollar = format.find('$', i);
    Write(format.substr(i, dollar - i));
    if (dollar == std::string_view::npos) break;
    size_t close = format.find('$', dollar + 1);
    if (close == std::string_view::npos) {
      Fail(Error::Internal(fmt::format("{}: unterminated '$'", where)));
      return;
    }
    std::string_view name = format.substr(dollar + 1, close - dollar - 1);
    i = close + 1;
    if (name.empty()) {
      Write("$");
      continue;
    }
    size_t s = 0;
    while (s < subs.size() && subs[s].name() != name) ++s;
    if (s == subs.size()) {
      Fail(Error::Internal(fmt::format("{}: no value for ${}$", where, name)));
      return;
    }
    used[s] = true;
    const Sub& sub = subs[s];
    const bool begins_line = LineIsBlank();
    const size_t line = line_start_;
    const size_t start = out_.size();
    const size_t outer = indent_;
    if (begins_line) indent_ = Column();
    if (sub.callback_)
      sub.callback_();
    else
      Write(sub.value_);
    indent_ = outer;
    if (!ok()) return;
    // Alone on its line: the line's newline goes with the text's, or with
    // the whole line when there is no text.
    if (!begins_line || i >= format.size() || format[i] != '\n') continue;
    if (out_.size() == start) {
      out_.resize(line);
      line_start_ = line;
      ++i;
    } else if (out_.back() == '\n') {
      ++i;
    }
  }
  if (!ok()) return;
  for (size_t s = 0; s < subs.size(); ++s)
    if (!used[s]) {
      Fail(Error::Internal(
          fmt::format("{}: value ${}$ is not used", where, subs[s].name())));
      return;
    }
}

}  // namespace kernelc::emit

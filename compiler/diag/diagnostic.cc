#include "compiler/diag/diagnostic.h"

#include <fmt/format.h>

namespace kernelc::diag {

std::string SourceLoc::ToString() const {
  if (file.empty()) return "";
  if (!has_position()) return file;
  return fmt::format("{}:{}:{}", file, line, col);
}

void DiagnosticSink::Error(SourceLoc loc, std::string message) {
  diags_.push_back({Severity::kError, std::move(loc), std::move(message)});
  ++errors_;
}

void DiagnosticSink::Warning(SourceLoc loc, std::string message) {
  diags_.push_back({Severity::kWarning, std::move(loc), std::move(message)});
}

void DiagnosticSink::Note(SourceLoc loc, std::string message) {
  diags_.push_back({Severity::kNote, std::move(loc), std::move(message)});
}

namespace {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

std::optional<std::string> LineOf(const std::string& text, int line) {
  size_t begin = 0;
  for (int i = 1; i < line; ++i) {
    begin = text.find('\n', begin);
    if (begin == std::string::npos) return std::nullopt;
    ++begin;
  }
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  std::string s = text.substr(begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

}  // namespace

std::string Format(const Diagnostic& d, const SourceReader& reader) {
  std::string where = d.loc.ToString();
  std::string out =
      where.empty()
          ? fmt::format("{}: {}\n", SeverityName(d.severity), d.message)
          : fmt::format("{}: {}: {}\n", where, SeverityName(d.severity),
                        d.message);
  if (!d.loc.has_position() || !reader) return out;
  std::optional<std::string> text = reader(d.loc.file);
  if (!text) return out;
  std::optional<std::string> line = LineOf(*text, d.loc.line);
  if (!line) return out;
  out += *line + "\n";
  // Keep tabs so the caret lines up under the same characters.
  std::string caret;
  for (int i = 0; i + 1 < d.loc.col && i < static_cast<int>(line->size()); ++i)
    caret += (*line)[i] == '\t' ? '\t' : ' ';
  out += caret + "^\n";
  return out;
}

std::string FormatAll(const DiagnosticSink& sink, const SourceReader& reader) {
  std::string out;
  for (const Diagnostic& d : sink.diagnostics()) out += Format(d, reader);
  int n = sink.error_count();
  if (n > 0)
    out += fmt::format("{} error{} generated.\n", n, n == 1 ? "" : "s");
  return out;
}

}  // namespace kernelc::diag

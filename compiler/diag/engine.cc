#include "compiler/diag/engine.h"

#include <tuple>

#include "compiler/diag/text_renderer.h"

namespace kernelc::diag {

namespace {

// Whether `a` is before `b` in one file: by line, then column.
bool Before(const SourceLoc& a, const SourceLoc& b) {
  return std::tie(a.line, a.col) < std::tie(b.line, b.col);
}

}  // namespace

void DiagnosticEngine::Add(Diagnostic d) {
  if (d.severity == Severity::kNote) {
    if (!dropping_notes_) diagnostics_.push_back(std::move(d));
    return;
  }
  for (const Diagnostic& seen : diagnostics_) {
    if (seen.severity == d.severity && seen.loc == d.loc &&
        seen.message == d.message) {
      dropping_notes_ = true;
      return;
    }
  }
  dropping_notes_ = false;
  if (d.is_error()) ++errors_;
  if (d.severity == Severity::kWarning) ++warnings_;
  diagnostics_.push_back(std::move(d));
}

bool DiagnosticEngine::HasErrorIn(const SourceRange& range) const {
  for (const Diagnostic& d : diagnostics_) {
    if (!d.is_error() || !d.loc.has_position() ||
        d.loc.file != range.begin.file)
      continue;
    if (!Before(d.loc, range.begin) && Before(d.loc, range.end)) return true;
  }
  return false;
}

void DiagnosticEngine::AddQuotedLines(std::string file, Excerpt lines) {
  quoted_[std::move(file)] = std::move(lines);
}

std::string DiagnosticEngine::Render() const {
  // The quoted lines become the excerpt of each diagnostic in their file,
  // so the renderer reads none of those files.
  std::vector<Diagnostic> shown = diagnostics_;
  for (Diagnostic& d : shown) {
    if (d.excerpt) continue;
    if (auto it = quoted_.find(d.loc.file); it != quoted_.end())
      d.excerpt = it->second;
  }
  return RenderText(shown, reader_) + Summary();
}

std::string DiagnosticEngine::Summary() const {
  bool about_files = false;
  for (const Diagnostic& d : diagnostics_)
    about_files = about_files || (d.is_error() && !d.loc.file.empty());
  if (!about_files) return "";
  return fmt::format("{} error{} generated.\n", errors_,
                     errors_ == 1 ? "" : "s");
}

}  // namespace kernelc::diag

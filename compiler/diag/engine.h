// The diagnostics engine: every stage of kernelc reports what is wrong with
// the user's input into one DiagnosticEngine per pipeline call (the
// frontend, Clang's own diagnostics through its adapter, the JSON spec
// reader, sema, the targets, the compile steps, the driver's checks). It
// counts, drops cascades, and renders everything clang-style; the front end
// (the command line) prints the rendering. A stage that stops at errors it
// reported returns Error::Reported().
#ifndef KERNELC_COMPILER_DIAG_ENGINE_H_
#define KERNELC_COMPILER_DIAG_ENGINE_H_

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/catalogue.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/diag/text_renderer.h"

namespace kernelc::diag {

// The diagnostic `kId` of the catalogue at `loc`, its format filled with
// `args` (formatted as fmt does).
template <Id kId, typename... Args>
Diagnostic Make(SourceLoc loc, const Args&... args) {
  constexpr const Message& message = MessageOf(kId);
  static_assert(CountFields(message.format) == sizeof...(Args),
                "the arguments do not match the catalogue's format");
  Diagnostic d;
  d.severity = message.severity;
  d.id = kId;
  d.loc = std::move(loc);
  d.message = fmt::format(fmt::runtime(message.format), args...);
  return d;
}

// Collects diagnostics in report order. Not thread-safe; one per pipeline
// call.
class DiagnosticEngine {
 public:
  // `reader` supplies the source lines of diagnostics that carry no
  // excerpt; without one they are rendered without their source line.
  explicit DiagnosticEngine(SourceReader reader = nullptr)
      : reader_(std::move(reader)) {}
  DiagnosticEngine(const DiagnosticEngine&) = delete;
  DiagnosticEngine& operator=(const DiagnosticEngine&) = delete;

  // Reports the catalogue's diagnostic `kId`.
  template <Id kId, typename... Args>
  void Report(SourceLoc loc, const Args&... args) {
    Add(Make<kId>(std::move(loc), args...));
  }

  // Adds a diagnostic: one that Make built and the reporter completed
  // (ranges, an excerpt), or one relayed from another tool (Clang's,
  // NVRTC's). Cascades are dropped here: an error or warning that repeats
  // one already reported (same severity, location and message: the same
  // header's error in two sources, say), and the notes that follow a
  // dropped diagnostic.
  void Add(Diagnostic d);

  // The diagnostics kept, in report order.
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  int error_count() const { return errors_; }  // errors and fatal errors
  int warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }

  // The lines of `file` that an input quotes from it (a JSON spec's
  // "origins": the file it was made from), numbered as `lines.first_line`
  // says. A diagnostic at `file` without an excerpt of its own is shown
  // with these, and the reader is never asked for `file`; a line they do
  // not hold is left out. A later call for the same file replaces them.
  void AddQuotedLines(std::string file, Excerpt lines);

  // Whether an error was reported in `range`: same file, and begin <= loc <
  // end. A reporter asks before adding what would only echo it (a
  // declaration that Clang rejected in part).
  bool HasErrorIn(const SourceRange& range) const;

  // Every diagnostic clang-style (see text_renderer.h), then the summary.
  std::string Render() const;

  // "N error(s) generated.\n" when errors were reported about the input's
  // files (a diagnostic that names a file); empty otherwise. Errors about
  // the invocation alone (an option, a file that cannot be found or
  // written) stand on their own, as a compiler driver's do.
  std::string Summary() const;

 private:
  SourceReader reader_;
  std::map<std::string, Excerpt> quoted_;
  std::vector<Diagnostic> diagnostics_;
  int errors_ = 0;
  int warnings_ = 0;
  // The last error or warning was dropped: so are the notes that follow.
  bool dropping_notes_ = false;
};

}  // namespace kernelc::diag

#endif  // KERNELC_COMPILER_DIAG_ENGINE_H_

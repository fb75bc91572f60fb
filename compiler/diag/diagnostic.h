// Diagnostics for what the model layer and later stages find wrong with the
// user's input. The frontend reports C++ problems through clang's own
// DiagnosticsEngine; both print in the same clang style:
//   file:line:col: error: message
//   <the source line>
//       ^
#ifndef KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_
#define KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kernelc::diag {

// 1-based line and column; line 0 means "the whole file" (or no file).
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool has_position() const { return line > 0; }
  // The location `offset` bytes to the right on the same line.
  SourceLoc Shifted(int offset) const {
    SourceLoc l = *this;
    if (l.has_position()) l.col += offset;
    return l;
  }
  std::string ToString() const;  // "file:line:col", "file" or ""
};

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLoc loc;
  std::string message;
};

// Collects diagnostics in report order. Not thread-safe.
class DiagnosticSink {
 public:
  void Error(SourceLoc loc, std::string message);
  void Warning(SourceLoc loc, std::string message);
  void Note(SourceLoc loc, std::string message);

  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  int error_count() const { return errors_; }
  bool has_errors() const { return errors_ > 0; }

 private:
  std::vector<Diagnostic> diags_;
  int errors_ = 0;
};

// Reads a source file's text for the excerpt under a diagnostic; nullopt when
// it cannot be read (the excerpt is then left out).
using SourceReader =
    std::function<std::optional<std::string>(const std::string& file)>;

// Formats one diagnostic clang-style, with the source line and a caret when
// the location has a position and the reader can supply the line.
std::string Format(const Diagnostic& d, const SourceReader& reader);

// Formats all diagnostics, then a summary line ("2 errors generated.") when
// there were errors, as clang does.
std::string FormatAll(const DiagnosticSink& sink, const SourceReader& reader);

}  // namespace kernelc::diag

#endif  // KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_

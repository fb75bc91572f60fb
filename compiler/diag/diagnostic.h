// One diagnostic: what kernelc, or a tool whose findings it relays (Clang,
// NVRTC), says about the user's input, where, and what to show under it.
// Plain data; DiagnosticEngine collects them and renders them clang-style:
//   file:line:col: error: message
//   <the source line>
//       ^~~~
#ifndef KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_
#define KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/diag/catalogue.h"

namespace kernelc::diag {

// 1-based line and column; the column counts bytes, as Clang's do. Line 0
// means "the whole file"; an empty file, no file at all (a diagnostic
// about the invocation).
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

  friend bool operator==(const SourceLoc& a, const SourceLoc& b) {
    return a.file == b.file && a.line == b.line && a.col == b.col;
  }
  friend bool operator!=(const SourceLoc& a, const SourceLoc& b) {
    return !(a == b);
  }
};

// The bytes [begin, end) of one file, underlined with '~'; `end` may lie on
// a later line.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;
};

// Text that a fix-it hint inserts before the byte at `loc`, shown in a line
// of its own under the caret (Clang's "expected ';'" inserts ";").
struct FixIt {
  SourceLoc loc;
  std::string insert;
};

// Source lines as the reporter read them, for a diagnostic whose file the
// renderer cannot read under its name: an in-memory file, or a buffer that a
// #line directive names otherwise.
struct Excerpt {
  int first_line = 0;  // the number of lines[0], counted as SourceLoc::line
  std::vector<std::string> lines;  // without their line breaks

  // Line `n`, or null when the excerpt does not hold it.
  const std::string* Line(int n) const;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  // The catalogue entry of a diagnostic that kernelc issues; none for one it
  // relays from another tool.
  std::optional<Id> id;
  SourceLoc loc;
  std::string message;
  std::vector<SourceRange> ranges;
  std::vector<FixIt> fixits;
  // The #include directives through which loc.file was read, outermost
  // first: "In file included from file:line:".
  std::vector<SourceLoc> include_stack;
  // When unset, the renderer reads loc.file.
  std::optional<Excerpt> excerpt;

  bool is_error() const {
    return severity == Severity::kError || severity == Severity::kFatal;
  }
};

}  // namespace kernelc::diag

#endif  // KERNELC_COMPILER_DIAG_DIAGNOSTIC_H_

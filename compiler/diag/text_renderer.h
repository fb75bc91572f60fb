// Diagnostics as text, the way Clang's text printer shows them, so that
// kernelc's own diagnostics and those it relays from Clang look alike:
//
//   In file included from k.cu:1:
//   lib.h:3:9: error: message
//   <the source line, tabs expanded, unprintable bytes as <XX> or <U+XXXX>>
//           ^~~~~           (the caret, ranges underlined)
//           ;               (text a fix-it inserts)
//
// The location is "file:line:col", "file" or, for a diagnostic about the
// invocation, "kernelc". As Clang does, the source excerpt is left out when
// a diagnostic is at the location of the one before it (a note on the same
// spot, say), and an include stack is shown once for consecutive
// diagnostics in one header, never for notes.
#ifndef KERNELC_COMPILER_DIAG_TEXT_RENDERER_H_
#define KERNELC_COMPILER_DIAG_TEXT_RENDERER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diag/diagnostic.h"

namespace kernelc::diag {

// Reads a source file's text for the excerpt under a diagnostic; nullopt
// when it cannot be read (the excerpt is then left out).
using SourceReader =
    std::function<std::optional<std::string>(const std::string& file)>;

// Reads `file` from disk when it is a regular file of at most
// kMaxInputBytes (compiler/util/input_file.h): the reader of a front end
// whose diagnostics point into the files it was given. A FIFO, a device or
// a directory is not read, and its diagnostics show no source line.
std::optional<std::string> ReadSourceFile(const std::string& file);

// Renders `diagnostics` in order. A diagnostic's excerpt holds its source
// lines; without one they are read with `reader` (each file once), and
// without a reader they are left out.
std::string RenderText(const std::vector<Diagnostic>& diagnostics,
                       const SourceReader& reader);

// The first line of a diagnostic, "file:line:col: error: message", without
// its line break.
std::string Headline(const Diagnostic& d);

}  // namespace kernelc::diag

#endif  // KERNELC_COMPILER_DIAG_TEXT_RENDERER_H_

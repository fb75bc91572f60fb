// What a pipeline reports to the user besides its result.
#ifndef KERNELC_COMPILER_DRIVER_DIAGNOSTICS_H_
#define KERNELC_COMPILER_DRIVER_DIAGNOSTICS_H_

#include <string>
#include <string_view>

#include "compiler/diag/diagnostic.h"
#include "compiler/util/status.h"

namespace kernelc::driver {

// Collects, in report order and rendered as text, everything a pipeline
// call reports: diagnostics about the input (clang-style, with the source
// line and a caret), warnings, and the error it stops at. A front end shows
// text() as it is (the command line prints it to stderr) and needs the
// result's error only for its kind. Not thread-safe; one per call.
class Diagnostics {
 public:
  // Renders the sink's diagnostics, reading the source lines from the
  // files, then the summary line ("2 errors generated.") when it holds
  // errors.
  void Add(const diag::DiagnosticSink& sink);
  // Diagnostics rendered already (Clang's, by the frontend).
  void AddRendered(std::string_view text);
  // "kernelc: warning: <message>".
  void Warning(std::string_view message);

  // The error of a pipeline that stops at the errors of `sink`, once Add
  // has rendered them: a user error that counts them ("2 errors
  // generated"), and that Finish does not render again.
  Error ErrorsIn(const diag::DiagnosticSink& sink);
  // The same for `error`, a user error whose diagnostics AddRendered
  // rendered.
  Error Reported(Error error);

  // Returns `result` (a Status or Result); when it is an error that the
  // diagnostics do not state yet, renders it first: "kernelc: error:
  // <message>", or "kernelc: internal error: <message>". Each pipeline's
  // entry point passes its result through here (a pipeline that calls
  // another gets its error rendered once).
  template <typename T>
  T Finish(T result) {
    if (!result.ok() && !reported_) Render(result.error());
    return result;
  }

  const std::string& text() const { return text_; }

 private:
  void Render(const Error& error);

  std::string text_;
  bool reported_ = false;  // the error a pipeline stops at is in text_
};

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_DIAGNOSTICS_H_

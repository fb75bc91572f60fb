#include "compiler/driver/diagnostics.h"

#include <fmt/format.h>

#include "compiler/util/file_io.h"

namespace kernelc::driver {

void Diagnostics::Add(const diag::DiagnosticSink& sink) {
  text_ += diag::FormatAll(sink, ReadFile);
}

void Diagnostics::AddRendered(std::string_view text) { text_ += text; }

void Diagnostics::Warning(std::string_view message) {
  text_ += fmt::format("kernelc: warning: {}\n", message);
}

Error Diagnostics::ErrorsIn(const diag::DiagnosticSink& sink) {
  int n = sink.error_count();
  return Reported(
      Error::User(fmt::format("{} error{} generated", n, n == 1 ? "" : "s")));
}

Error Diagnostics::Reported(Error error) {
  reported_ = true;
  return error;
}

void Diagnostics::Render(const Error& error) {
  text_ += fmt::format(
      "kernelc: {}{}\n",
      error.kind == ErrorKind::kInternal ? "internal error: " : "error: ",
      error.message);
  reported_ = true;
}

}  // namespace kernelc::driver

// The one printer every emitter writes through, in the manner of protobuf's
// io::Printer:
//
//   p.Emit({{"name", symbol}, {"body", [&] { EmitBody(p); }}}, R"code(
//     void $name$() {
//       $body$
//     }
//   )code");
//
// Text is a format with $name$ placeholders ($$ is a literal $), filled
// from substitutions: a value, or a callback that emits a nested section
// into the same printer. Formats are snippets written as raw strings beside
// the code that fills them, or whole-file templates from templates/
// (EmitTemplate). User text is only ever a value, never a format.
// Snippets' delimiters are "code" and "py": clang-format's Google style
// reformats raw strings delimited "cc" or "cpp" as C++, which would change
// the emitted text.
//
// Layout rules:
// - A format that starts with a newline is a raw-string snippet: that
//   newline goes, the indentation of its first non-blank line is removed
//   from every line, and a last line of only spaces (the closing
//   delimiter's) is dropped.
// - Every line starts at the current indentation, the column of the
//   enclosing section. Text substituted for a placeholder that begins its
//   line (only spaces before it) starts its further lines at the
//   placeholder's column; elsewhere they start at the current indentation.
//   A callback's sections nest the same way.
// - A placeholder alone on its line whose text ends with a newline takes
//   the line's own newline with it, and one whose text is empty takes the
//   whole line: an optional section leaves no blank line behind.
// - Lines with no text get no indentation.
//
// A placeholder without a substitution, a substitution that no placeholder
// uses, and a malformed format are internal errors: the first one sticks,
// the printer ignores everything after it, and Finish() reports it with the
// emitter's file and line (or the template's name).
#ifndef KERNELC_COMPILER_EMIT_PRINTER_H_
#define KERNELC_COMPILER_EMIT_PRINTER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compiler/util/status.h"

namespace kernelc::emit {

class Printer {
 public:
  // Where an Emit call is in kernelc's source, for the errors it causes.
  struct Location {
    static Location Current(const char* file = __builtin_FILE(),
                            int line = __builtin_LINE()) {
      return {file, line};
    }
    const char* file = "";
    int line = 0;
  };

  // One placeholder's substitution: a value (text, or an integer as
  // decimal), or a callback that emits the section into this printer.
  class Sub {
   public:
    Sub(std::string name, std::string value)
        : name_(std::move(name)), value_(std::move(value)) {}
    Sub(std::string name, const char* value)
        : name_(std::move(name)), value_(value) {}
    Sub(std::string name, std::string_view value)
        : name_(std::move(name)), value_(value) {}
    template <typename Int,
              typename = std::enable_if_t<std::is_integral_v<Int> &&
                                          !std::is_same_v<Int, bool>>>
    Sub(std::string name, Int value)
        : name_(std::move(name)), value_(std::to_string(value)) {}
    Sub(std::string name, std::function<void()> callback)
        : name_(std::move(name)), callback_(std::move(callback)) {}

    const std::string& name() const { return name_; }

   private:
    friend class Printer;
    std::string name_;
    std::string value_;
    std::function<void()> callback_;  // set: a section
  };
  using Subs = std::vector<Sub>;

  Printer() = default;
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;

  // Emits `format` (a snippet: pass a string literal, never user text)
  // with its placeholders filled from `subs`.
  void Emit(const Subs& subs, std::string_view format,
            Location where = Location::Current());
  void Emit(std::string_view format, Location where = Location::Current());

  // Writes `text` as it is, at the current indentation: a value, never
  // read for placeholders.
  void PrintRaw(std::string_view text) {
    if (ok()) Write(text);
  }

  // Emits the embedded whole-file template `templates/<name>` as it is
  // (no raw-string trimming), filled from `subs`.
  void EmitTemplate(std::string_view name, const Subs& subs);

  // Stops the printer with `error`, unless it failed before: for a
  // callback that meets a problem.
  void Fail(Error error);

  bool ok() const { return !error_.has_value(); }

  // The text, or the first error.
  Result<std::string> Finish() const;

 private:
  // Writes `text` as output (a value: never read for placeholders).
  void Write(std::string_view text);
  void Substitute(std::string_view format, const Subs& subs,
                  const std::string& where);
  // The column where the next character goes.
  size_t Column() const;
  // Whether the current line holds only spaces so far.
  bool LineIsBlank() const;

  std::string out_;
  size_t line_start_ = 0;  // in out_
  size_t indent_ = 0;      // of the enclosing section
  std::optional<Error> error_;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_PRINTER_H_

// Explicit results across stage boundaries. Library code never prints or
// exits: it returns one of these and the driver decides what to do.
#ifndef KERNELC_COMPILER_UTIL_STATUS_H_
#define KERNELC_COMPILER_UTIL_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace kernelc {

// kUser: the input is wrong, and the message says how: an error of a
//   library below the diagnostics engine (file I/O), which the driver
//   reports as a diagnostic (exit 1).
// kReported: the input is wrong, and the diagnostics reported to the call's
//   diag::DiagnosticEngine say how; the error carries nothing more (exit 1).
// kInternal: a bug or a toolchain failure (exit 2).
enum class ErrorKind { kUser, kReported, kInternal };

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;

  static Error User(std::string message) {
    return {ErrorKind::kUser, std::move(message)};
  }
  static Error Reported() {
    return {ErrorKind::kReported, "errors were reported as diagnostics"};
  }
  static Error Internal(std::string message) {
    return {ErrorKind::kInternal, std::move(message)};
  }
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_STATUS_H_

// What the engine's tests share.
#ifndef KERNELC_COMPILER_DIAG_DIAG_TEST_UTIL_H_
#define KERNELC_COMPILER_DIAG_DIAG_TEST_UTIL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "compiler/diag/diagnostic.h"
#include "compiler/diag/text_renderer.h"

namespace kernelc::diag::testing {

// A diagnostic as a tool that kernelc relays reports it: no identifier.
inline Diagnostic At(Severity s, SourceLoc loc, std::string message) {
  Diagnostic d;
  d.severity = s;
  d.loc = std::move(loc);
  d.message = std::move(message);
  return d;
}

// Reads `files` (path -> text) instead of the disk.
inline SourceReader FileMap(std::map<std::string, std::string> files) {
  return [files = std::move(files)](
             const std::string& f) -> std::optional<std::string> {
    auto it = files.find(f);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace kernelc::diag::testing

#endif  // KERNELC_COMPILER_DIAG_DIAG_TEST_UTIL_H_

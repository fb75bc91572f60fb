// What the frontend's tests share: parsing in-memory sources.
#ifndef KERNELC_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_
#define KERNELC_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/frontend/frontend.h"

namespace kernelc::frontend::testing {

struct Parsed {
  Result<model::Module> result = Error::Internal("not parsed");
  std::string diagnostics;
};

// Parses in-memory sources, given as (path, text), with kernelc's headers.
inline Parsed Parse(
    const std::vector<std::pair<std::string, std::string>>& files,
    Options options = DefaultOptions()) {
  std::vector<std::string> sources;
  for (const auto& [path, text] : files) {
    options.virtual_files.push_back({path, text});
    sources.push_back(path);
  }
  Parsed p;
  diag::DiagnosticEngine diags;
  p.result = ParseSources(sources, options, diags);
  p.diagnostics = diags.Render();
  return p;
}

// Parses one source, which must be free of errors, and returns its model.
inline model::Module ParseOk(const std::string& path, const std::string& text) {
  Parsed p = Parse({{path, text}});
  INFO(p.diagnostics);
  REQUIRE(p.result.ok());
  CHECK(p.diagnostics.empty());
  return p.result.value();
}

inline std::string Loc(const diag::SourceLoc& l) { return l.ToString(); }

}  // namespace kernelc::frontend::testing

#endif  // KERNELC_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_

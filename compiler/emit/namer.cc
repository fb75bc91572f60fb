#include "compiler/emit/namer.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

namespace kernelc::emit {

namespace {

constexpr std::array<std::string_view, 38> kPythonKeywords = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield",
    "match",  "case",   "type",
};

}  // namespace

Namer::Namer(std::string package, std::string hash)
    : package_(std::move(package)), short_hash_(hash.substr(0, 12)) {}

std::string Namer::LibraryFile() const {
  return fmt::format("_kernelc_{}.so", short_hash_);
}

std::string Namer::FfiTarget(std::string_view kernel) const {
  return fmt::format("{}.{}.{}", package_, kernel, short_hash_);
}

std::string Namer::HandlerSymbol(std::string_view kernel,
                                 std::string_view platform) const {
  return fmt::format("kc_{}_{}_{}_{}", package_, kernel, short_hash_, platform);
}

std::string Namer::CudaModuleSymbol(int source_index) const {
  return fmt::format("kc_{}_{}_cuda_module_{}", package_, short_hash_,
                     source_index);
}

std::string Namer::CudaFoldModuleSymbol(int source_index) const {
  return fmt::format("kc_{}_{}_cuda_fold_module_{}", package_, short_hash_,
                     source_index);
}

std::string Namer::CudaFoldEntry(std::string_view kernel) {
  return fmt::format("kc_fold_{}", kernel);
}

std::string Namer::CudaEntry(std::string_view kernel) {
  return fmt::format("kc_entry_{}", kernel);
}

std::string Namer::PresentAttr(std::string_view param) {
  return fmt::format("kc_present_{}", param);
}

std::string Namer::LeadingAttr() { return "kc_leading"; }

std::string Namer::PyPresent(std::string_view param) {
  return fmt::format("_present_{}", param);
}

std::string Namer::PyVariant(std::string_view id) {
  return fmt::format("_{}", Python(id));
}

std::string Namer::CudaCacheAccessor(int source_index, bool fold) {
  return fmt::format("kc_cuda_{}cache_{}", fold ? "fold_" : "", source_index);
}

std::string Namer::CpuEntrySymbol(std::string_view kernel) const {
  return fmt::format("kc_{}_{}_{}_cpu_entry", package_, kernel, short_hash_);
}

std::string Namer::PyPrivate(std::string_view kernel, std::string_view what) {
  return fmt::format("_{}_{}", Python(kernel), what);
}

std::string Namer::CppLocal(std::string_view prefix, std::string_view name) {
  return fmt::format("{}_{}", prefix, name);
}

bool Namer::IsPythonKeyword(std::string_view name) {
  for (std::string_view k : kPythonKeywords)
    if (k == name) return true;
  return false;
}

std::string Namer::Python(std::string_view name) {
  // Generated code keeps its own names behind a leading underscore ("_kc",
  // "_results", "_s_n"); a user name that starts with one is prefixed with
  // "_u" so it cannot collide with them.
  if (IsPythonKeyword(name)) return fmt::format("{}_", name);
  if (!name.empty() && name[0] == '_') return fmt::format("_u{}", name);
  return std::string(name);
}

std::string Namer::PySymbol(std::string_view name) {
  return fmt::format("_s_{}", name);
}

std::string Namer::PyDerived(std::string_view name) {
  return fmt::format("_d_{}", name);
}

bool Namer::IsValidPackageName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return !IsPythonKeyword(name);
}

}  // namespace kernelc::emit

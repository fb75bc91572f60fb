#include "compiler/frontend/constants.h"

#include <clang/Lex/MacroInfo.h>

#include <set>

namespace kernelc::frontend {

namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

// Appends the expansion of `mi` to `out`; false when it cannot be expanded
// here. `active` holds the macros being expanded, which C does not expand
// again inside themselves.
bool Expand(clang::Preprocessor& pp, const clang::MacroInfo& mi,
            clang::SourceLocation loc, std::set<std::string>& active,
            std::string& out) {
  for (const clang::Token& tok : mi.tokens()) {
    if (const clang::IdentifierInfo* ii = tok.getIdentifierInfo();
        ii != nullptr && !active.count(ii->getName().str())) {
      const clang::MacroInfo* inner =
          pp.getMacroDefinitionAtLoc(ii, loc).getMacroInfo();
      if (inner != nullptr) {
        if (inner->isFunctionLike()) return false;
        active.insert(ii->getName().str());
        bool ok = Expand(pp, *inner, loc, active, out);
        active.erase(ii->getName().str());
        if (!ok) return false;
        continue;
      }
    }
    if (tok.is(clang::tok::hash) || tok.is(clang::tok::hashhash)) return false;
    if (!out.empty()) out += ' ';
    out += pp.getSpelling(tok);
  }
  return true;
}

}  // namespace

std::vector<NameUse> ConstantCandidates(std::string_view text) {
  std::vector<NameUse> out;
  const int n = static_cast<int>(text.size());
  for (int i = 0; i < n;) {
    if (!IsNameStart(text[i])) {
      // A number's letters ("2x", "0x10") are not names.
      if (text[i] >= '0' && text[i] <= '9')
        while (i < n && (IsNameChar(text[i]) || text[i] == '.')) ++i;
      else
        ++i;
      continue;
    }
    int end = i;
    while (end < n && IsNameChar(text[end])) ++end;
    std::string name(text.substr(i, end - i));
    int before = i - 1;
    while (before >= 0 && IsSpace(text[before])) --before;
    int after = end;
    while (after < n && IsSpace(text[after])) ++after;
    const bool member = before >= 0 && text[before] == '.';
    const bool call = after < n && text[after] == '(' &&
                      (name == "ceil_div" || name == "min" || name == "max");
    if (!member && !call && name != "_") out.push_back({name, i});
    i = end;
  }
  return out;
}

std::optional<std::string> ExpandObjectMacro(clang::Preprocessor& pp,
                                             llvm::StringRef name,
                                             clang::SourceLocation loc) {
  const clang::IdentifierInfo* ii = pp.getIdentifierInfo(name);
  if (ii == nullptr || !ii->hadMacroDefinition()) return std::nullopt;
  const clang::MacroInfo* mi =
      pp.getMacroDefinitionAtLoc(ii, loc).getMacroInfo();
  if (mi == nullptr || mi->isFunctionLike()) return std::nullopt;
  std::set<std::string> active = {name.str()};
  std::string out;
  if (!Expand(pp, *mi, loc, active, out)) return std::nullopt;
  return out;
}

}  // namespace kernelc::frontend

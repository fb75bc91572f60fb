#include "compiler/frontend/locations.h"

#include <algorithm>

namespace kernelc::frontend {

bool InUserCode(clang::SourceLocation loc, const clang::SourceManager& sm) {
  if (loc.isInvalid()) return false;
  const clang::SourceLocation at = sm.getFileLoc(loc);
  if (sm.isInSystemHeader(at)) return false;
  return !sm.getFilename(at).starts_with(kVirtualRoot);
}

std::vector<diag::SourceLoc> IncludeStack(const clang::PresumedLoc& p,
                                          const clang::SourceManager& sm) {
  std::vector<diag::SourceLoc> stack;
  for (clang::SourceLocation at = p.getIncludeLoc(); at.isValid();) {
    clang::PresumedLoc q = sm.getPresumedLoc(at);
    if (q.isInvalid()) break;
    stack.push_back({q.getFilename(), static_cast<int>(q.getLine()),
                     static_cast<int>(q.getColumn())});
    at = q.getIncludeLoc();
  }
  std::reverse(stack.begin(), stack.end());
  return stack;
}

std::optional<diag::Excerpt> LinesOf(const clang::SourceManager& sm,
                                     clang::FileID fid, unsigned first,
                                     unsigned last, int number) {
  bool invalid = false;
  llvm::StringRef buffer = sm.getBufferData(fid, &invalid);
  if (invalid) return std::nullopt;
  diag::Excerpt excerpt;
  excerpt.first_line = number;
  for (unsigned n = first; n <= last; ++n) {
    unsigned offset = sm.getFileOffset(sm.translateLineCol(fid, n, 1));
    if (offset > buffer.size() || sm.getLineNumber(fid, offset) != n) break;
    excerpt.lines.push_back(
        buffer.substr(offset)
            .take_until([](char c) { return c == '\n' || c == '\r'; })
            .str());
  }
  return excerpt;
}

diag::SourceLoc PresumedSourceLoc(const clang::PresumedLoc& p) {
  return {p.getFilename(), static_cast<int>(p.getLine()),
          static_cast<int>(p.getColumn())};
}

diag::SourceLoc ToSourceLoc(clang::SourceLocation loc,
                            const clang::SourceManager& sm) {
  if (loc.isInvalid()) return {};
  clang::PresumedLoc p = sm.getPresumedLoc(sm.getFileLoc(loc));
  if (p.isInvalid()) return {};
  return PresumedSourceLoc(p);
}

void Locate(diag::Diagnostic& d, clang::SourceLocation loc,
            const clang::SourceManager& sm) {
  if (loc.isInvalid()) return;
  const clang::SourceLocation at = sm.getFileLoc(loc);
  clang::PresumedLoc p = sm.getPresumedLoc(at);
  if (p.isInvalid()) return;
  d.loc = PresumedSourceLoc(p);
  d.include_stack = IncludeStack(p, sm);
  auto [fid, offset] = sm.getDecomposedLoc(at);
  unsigned line = sm.getLineNumber(fid, offset);
  d.excerpt = LinesOf(sm, fid, line, line, d.loc.line);
}

}  // namespace kernelc::frontend

#include "compiler/frontend/host_code.h"

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <set>

namespace kernelc::frontend {

namespace {

// A declaration that device code may be: a kernel (__global__, or a
// function with kernelc annotations), a __device__ function, a device
// variable.
bool DeviceSide(const clang::Decl* d) {
  if (const auto* t = llvm::dyn_cast<clang::FunctionTemplateDecl>(d))
    d = t->getTemplatedDecl();
  if (d->hasAttr<clang::CUDAGlobalAttr>() ||
      d->hasAttr<clang::CUDADeviceAttr>() ||
      d->hasAttr<clang::CUDAConstantAttr>() ||
      d->hasAttr<clang::CUDASharedAttr>())
    return true;
  auto annotated = [](const clang::Decl* x) {
    for (const auto* a : x->specific_attrs<clang::AnnotateAttr>())
      if (a->getAnnotation().starts_with("kc.")) return true;
    return false;
  };
  if (annotated(d)) return true;
  if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d))
    for (const clang::ParmVarDecl* p : f->parameters())
      if (annotated(p)) return true;
  return false;
}

// The entity a top-level declaration stands for: a function template for
// its pattern, the first declaration of a function or variable.
const clang::Decl* Entity(const clang::Decl* d) {
  if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d)) {
    if (const clang::FunctionTemplateDecl* t = f->getPrimaryTemplate())
      return t->getCanonicalDecl();
    if (const clang::FunctionTemplateDecl* t =
            f->getDescribedFunctionTemplate())
      return t->getCanonicalDecl();
    if (const clang::FunctionDecl* p = f->getInstantiatedFromMemberFunction())
      return p->getCanonicalDecl();
  }
  return d->getCanonicalDecl();
}

// Host-only declarations and what device code refers to.
class Finder : public clang::RecursiveASTVisitor<Finder> {
 public:
  explicit Finder(clang::ASTContext& ctx)
      : ctx_(ctx), sm_(ctx.getSourceManager()) {}

  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return true; }

  std::map<std::string, std::vector<Span>> Run() {
    Collect(ctx_.getTranslationUnitDecl());
    while (!work_.empty()) {
      const clang::Decl* d = work_.back();
      work_.pop_back();
      TraverseDecl(const_cast<clang::Decl*>(d));
    }
    std::map<std::string, std::vector<Span>> out;
    for (const auto& [entity, decls] : candidates_) {
      if (used_.count(entity)) continue;
      for (const clang::Decl* d : decls) AddSpan(d, out);
    }
    for (auto& [file, spans] : out)
      std::sort(spans.begin(), spans.end(),
                [](const Span& a, const Span& b) { return a.begin < b.begin; });
    return out;
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    Use(e->getDecl());
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* e) {
    Use(e->getMemberDecl());
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* e) {
    Use(e->getConstructor());
    return true;
  }
  bool VisitOverloadExpr(clang::OverloadExpr* e) {
    for (const clang::NamedDecl* d : e->decls()) Use(d->getUnderlyingDecl());
    return true;
  }

 private:
  // A declaration of the user's, not of a system header.
  bool Users(const clang::Decl* d) const {
    clang::SourceLocation loc = sm_.getFileLoc(d->getLocation());
    return loc.isValid() && !sm_.isInSystemHeader(loc) &&
           sm_.getFileEntryRefForID(sm_.getFileID(loc)).has_value();
  }

  void Collect(const clang::DeclContext* dc) {
    for (const clang::Decl* d : dc->decls()) {
      if (llvm::isa<clang::NamespaceDecl>(d) ||
          llvm::isa<clang::LinkageSpecDecl>(d)) {
        Collect(llvm::cast<clang::DeclContext>(d));
        continue;
      }
      if (!Users(d) || d->isImplicit()) continue;
      const bool code =
          llvm::isa<clang::FunctionDecl>(d) ||
          llvm::isa<clang::FunctionTemplateDecl>(d) ||
          (llvm::isa<clang::VarDecl>(d) && !llvm::isa<clang::ParmVarDecl>(d));
      if (!code) continue;
      if (DeviceSide(d)) {
        used_.insert(Entity(d));
        work_.push_back(d);
      } else {
        candidates_[Entity(d)].push_back(d);
      }
    }
  }

  void Use(const clang::Decl* d) {
    if (d == nullptr) return;
    const clang::Decl* entity = Entity(d);
    auto it = candidates_.find(entity);
    if (it == candidates_.end() || !used_.insert(entity).second) return;
    for (const clang::Decl* decl : it->second) work_.push_back(decl);
  }

  void AddSpan(const clang::Decl* d,
               std::map<std::string, std::vector<Span>>& out) {
    clang::SourceRange r = d->getSourceRange();
    // Attributes before the declaration (__host__) belong to it.
    for (const clang::Attr* a : d->attrs()) {
      clang::SourceLocation at = a->getLocation();
      if (at.isValid() &&
          sm_.isBeforeInTranslationUnit(sm_.getExpansionLoc(at),
                                        sm_.getExpansionLoc(r.getBegin())))
        r.setBegin(sm_.getExpansionRange(at).getBegin());
    }
    clang::SourceLocation begin = sm_.getExpansionLoc(r.getBegin());
    clang::SourceLocation end = sm_.getExpansionRange(r.getEnd()).getEnd();
    if (begin.isInvalid() || end.isInvalid() ||
        sm_.getFileID(begin) != sm_.getFileID(end))
      return;
    const clang::LangOptions& lo = ctx_.getLangOpts();
    const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
    const auto* t = llvm::dyn_cast<clang::FunctionTemplateDecl>(d);
    const bool body =
        (f && f->doesThisDeclarationHaveABody()) ||
        (t && t->getTemplatedDecl()->doesThisDeclarationHaveABody());
    clang::SourceLocation after =
        clang::Lexer::getLocForEndOfToken(end, 0, sm_, lo);
    if (!body) {
      // A declaration ends with ';'; one of several declarators ("int a,
      // b;") is left as it is.
      clang::SourceLocation semi = clang::Lexer::findLocationAfterToken(
          end, clang::tok::semi, sm_, lo,
          /*SkipTrailingWhitespaceAndNewLine=*/false);
      if (semi.isInvalid()) return;
      after = semi;
    }
    if (after.isInvalid()) return;
    clang::FileID fid = sm_.getFileID(begin);
    auto file = sm_.getFileEntryRefForID(fid);
    if (!file) return;
    out[std::string(file->getName())].push_back(
        {sm_.getFileOffset(begin), sm_.getFileOffset(after)});
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  // Host-only declarations of the user's, by entity.
  std::map<const clang::Decl*, std::vector<const clang::Decl*>> candidates_;
  std::set<const clang::Decl*> used_;
  std::vector<const clang::Decl*> work_;
};

}  // namespace

std::map<std::string, std::vector<Span>> HostOnlyCode(clang::ASTContext& ctx) {
  return Finder(ctx).Run();
}

std::string Blank(std::string_view text, const std::vector<Span>& spans) {
  std::string out(text);
  for (const Span& s : spans)
    for (unsigned i = s.begin; i < s.end && i < out.size(); ++i)
      if (out[i] != '\n' && out[i] != '\r') out[i] = ' ';
  return out;
}

}  // namespace kernelc::frontend

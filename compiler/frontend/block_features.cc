#include "compiler/frontend/block_features.h"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/QualTypeNames.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <llvm/ADT/StringSwitch.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "compiler/frontend/annotations.h"
#include "compiler/frontend/cpp_types.h"
#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

// CUDA's block-level functions as Clang's CUDA mode declares them (builtins,
// or functions of its wrapper headers): the ones kernelc/host.h marks, and
// the barrier cooperative groups synchronize with.
bool IsCudaBlockFunction(llvm::StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("__syncthreads", "__syncthreads_count", "__syncthreads_and",
             "__syncthreads_or", "__syncwarp", true)
      .Cases("__activemask", "__ballot_sync", "__any_sync", "__all_sync", true)
      .Cases("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
             "__shfl_xor_sync", "__barrier_sync", true)
      .Default(false);
}

// The block-level feature a declaration is ("__syncthreads", "__shared__",
// ...): read from the "kc.block_feature" mark of kernelc/host.h (or the
// "kc.grid_sync" mark of the cooperative-groups stand-in), looking through
// template specializations to the pattern that carries the mark, or in CUDA
// mode from the declaration itself.
std::optional<std::string> BlockFeatureOf(const clang::Decl* d) {
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>()) {
    if (a->getAnnotation() == kGridSync) return std::string(model::kGridSync);
    if (a->getAnnotation() != kBlockFeature || a->args_size() < 1) continue;
    if (const clang::StringLiteral* lit = AsStringLiteral(*a->args_begin()))
      return lit->getString().str();
  }
  if (d->hasAttr<clang::CUDASharedAttr>()) return std::string("__shared__");
  if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d);
      fd != nullptr && fd->getIdentifier() != nullptr &&
      d->getASTContext().getLangOpts().CUDA &&
      IsCudaBlockFunction(fd->getName()))
    return fd->getName().str();
  if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d)) {
    if (const clang::FunctionTemplateDecl* t = fd->getPrimaryTemplate())
      return BlockFeatureOf(t->getTemplatedDecl());
    if (const clang::FunctionDecl* p = fd->getTemplateInstantiationPattern();
        p != nullptr && p != fd)
      return BlockFeatureOf(p);
  }
  return std::nullopt;
}

// The innermost namespaces around `d`, outermost first ("" for an unnamed
// one): where a block-scope `extern` declaration's entity lives.
std::vector<std::string> EnclosingNamespaces(const clang::Decl* d) {
  std::vector<std::string> out;
  for (const clang::DeclContext* dc = d->getDeclContext(); dc != nullptr;
       dc = dc->getParent())
    if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(dc))
      out.push_back(ns->isAnonymousNamespace() ? "" : ns->getName().str());
  std::reverse(out.begin(), out.end());
  return out;
}

// The element type of an `extern __shared__ T name[]` as code at namespace
// scope spells it: 16-bit floats by CUDA's names, which both readings of a
// source know, everything else fully qualified.
std::string SharedElementType(const clang::VarDecl* v) {
  const clang::ASTContext& ctx = v->getASTContext();
  clang::QualType t = v->getType();
  if (const clang::ArrayType* a = ctx.getAsArrayType(t))
    t = a->getElementType();
  t = ctx.getCanonicalType(t);
  const std::optional<model::DType> dtype = ClassifyType(t, ctx).dtype;
  if (dtype == model::DType::kF16) return "__half";
  if (dtype == model::DType::kBF16) return "__nv_bfloat16";
  clang::PrintingPolicy policy(ctx.getLangOpts());
  policy.SuppressTagKeyword = true;
  return clang::TypeName::getFullyQualifiedName(t, ctx, policy,
                                                /*WithGlobalNsPrefix=*/true);
}

// Records the block-level features a kernel uses, at the place
// FindBlockFeatures describes, and the `extern __shared__` arrays it
// reaches.
class FeatureFinder : public clang::RecursiveASTVisitor<FeatureFinder> {
 public:
  struct Use {
    std::string what;
    clang::SourceLocation loc;
  };

  explicit FeatureFinder(const clang::SourceManager& sm) : sm_(sm) {}

  // After Find: sorted, without repeats.
  std::vector<model::ExternShared> extern_shared() const {
    return {extern_shared_.begin(), extern_shared_.end()};
  }

  std::vector<Use> Find(const clang::FunctionDecl* kernel) {
    Enqueue(kernel, clang::SourceLocation());
    while (!queue_.empty()) {
      auto [fd, origin] = queue_.back();
      queue_.pop_back();
      origin_ = origin;
      TraverseDecl(const_cast<clang::FunctionDecl*>(fd));
    }
    return std::move(uses_);
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    const clang::ValueDecl* d = e->getDecl();
    if (std::optional<std::string> what = BlockFeatureOf(d)) {
      // An `extern __shared__` array declared at namespace scope.
      if (const auto* v = llvm::dyn_cast<clang::VarDecl>(d))
        NoteExternShared(v, *what);
      Record(std::move(*what), e->getLocation());
    }
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d))
      Enqueue(fd, e->getLocation());
    return true;
  }
  // A member function that is a feature itself (grid_group::sync).
  bool VisitMemberExpr(clang::MemberExpr* e) {
    if (std::optional<std::string> what = BlockFeatureOf(e->getMemberDecl()))
      Record(std::move(*what), e->getMemberLoc());
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* v) {
    std::optional<std::string> what = BlockFeatureOf(v);
    if (!what) return true;
    NoteExternShared(v, *what);
    Record(std::move(*what), v->getLocation());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    if (const clang::FunctionDecl* fd = c->getDirectCallee())
      Enqueue(fd, c->getBeginLoc());
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
    Enqueue(c->getConstructor(), c->getBeginLoc());
    return true;
  }

 private:
  void Record(std::string what, clang::SourceLocation loc) {
    uses_.push_back({std::move(what), origin_.isValid() ? origin_ : loc});
  }

  void NoteExternShared(const clang::VarDecl* v, const std::string& what) {
    if (what == "__shared__" && v->hasExternalStorage())
      extern_shared_.insert(
          {EnclosingNamespaces(v), v->getName().str(), SharedElementType(v)});
  }

  // `at`: where the function being traversed refers to `fd`; it becomes the
  // origin of the uses in `fd` when `fd` lies in a system header.
  void Enqueue(const clang::FunctionDecl* fd, clang::SourceLocation at) {
    if (fd == nullptr) return;
    const clang::FunctionDecl* def = fd->getDefinition();
    if (def == nullptr || !def->hasBody()) return;
    if (!visited_.insert(def).second) return;
    clang::SourceLocation origin = origin_;
    if (origin.isInvalid() && at.isValid() &&
        sm_.isInSystemHeader(sm_.getFileLoc(def->getLocation())))
      origin = at;
    queue_.push_back({def, origin});
  }

  const clang::SourceManager& sm_;
  clang::SourceLocation origin_;  // of the function being traversed
  std::set<const clang::FunctionDecl*> visited_;
  std::vector<std::pair<const clang::FunctionDecl*, clang::SourceLocation>>
      queue_;
  std::vector<Use> uses_;
  std::set<model::ExternShared> extern_shared_;
};

}  // namespace

BlockUse FindBlockFeatures(const clang::FunctionDecl* kernel,
                           const clang::SourceManager& sm) {
  FeatureFinder finder(sm);
  std::vector<FeatureFinder::Use> uses = finder.Find(kernel);
  for (FeatureFinder::Use& u : uses) u.loc = sm.getFileLoc(u.loc);
  std::stable_sort(
      uses.begin(), uses.end(),
      [&sm](const FeatureFinder::Use& a, const FeatureFinder::Use& b) {
        return sm.isBeforeInTranslationUnit(a.loc, b.loc);
      });
  BlockUse use;
  std::set<std::string> seen;
  for (const FeatureFinder::Use& u : uses)
    if (seen.insert(u.what).second)
      use.features.push_back({u.what, ToSourceLoc(u.loc, sm)});
  use.extern_shared = finder.extern_shared();
  return use;
}

}  // namespace kernelc::frontend

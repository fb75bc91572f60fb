#include "compiler/frontend/block_features.h"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <llvm/ADT/StringSwitch.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "compiler/frontend/annotations.h"
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
// ...): read from the "kc.block_feature" mark of kernelc/host.h, looking
// through template specializations to the pattern that carries the mark, or
// in CUDA mode from the declaration itself.
std::optional<std::string> BlockFeatureOf(const clang::Decl* d) {
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>()) {
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

// Records the block-level features a kernel uses, at the place
// FindBlockFeatures describes.
class FeatureFinder : public clang::RecursiveASTVisitor<FeatureFinder> {
 public:
  struct Use {
    std::string what;
    clang::SourceLocation loc;
  };

  explicit FeatureFinder(const clang::SourceManager& sm) : sm_(sm) {}

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
    if (std::optional<std::string> what = BlockFeatureOf(d))
      Record(std::move(*what), e->getLocation());
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d))
      Enqueue(fd, e->getLocation());
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* v) {
    if (std::optional<std::string> what = BlockFeatureOf(v))
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
};

}  // namespace

std::vector<model::BlockFeature> FindBlockFeatures(
    const clang::FunctionDecl* kernel, const clang::SourceManager& sm) {
  std::vector<FeatureFinder::Use> uses = FeatureFinder(sm).Find(kernel);
  for (FeatureFinder::Use& u : uses) u.loc = sm.getFileLoc(u.loc);
  std::stable_sort(
      uses.begin(), uses.end(),
      [&sm](const FeatureFinder::Use& a, const FeatureFinder::Use& b) {
        return sm.isBeforeInTranslationUnit(a.loc, b.loc);
      });
  std::vector<model::BlockFeature> features;
  std::set<std::string> seen;
  for (const FeatureFinder::Use& u : uses)
    if (seen.insert(u.what).second)
      features.push_back({u.what, ToSourceLoc(u.loc, sm)});
  return features;
}

}  // namespace kernelc::frontend

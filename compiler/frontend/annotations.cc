#include "compiler/frontend/annotations.h"

#include <llvm/ADT/StringSwitch.h>

#include <algorithm>

namespace kernelc::frontend {

llvm::StringRef SpelledName(llvm::StringRef annotation) {
  return llvm::StringSwitch<llvm::StringRef>(annotation)
      .Case(kIn, "KC_IN")
      .Case(kInMut, "KC_INMUT")
      .Case(kOut, "KC_OUT")
      .Case(kShape, "KC_SHAPE")
      .Case(kInit, "KC_INIT")
      .Case(kDerived, "KC_DERIVED")
      .Case(kGrid, "KC_GRID")
      .Case(kBlocks, "KC_BLOCKS")
      .Case(kTraced, "KC_TRACED")
      .Case(kOptional, "KC_OPTIONAL")
      .Case(kSum, "KC_SUM")
      .Case(kBlock, "KC_BLOCK")
      .Case(kSharedBytes, "KC_SHARED_BYTES")
      .Case(kKernel, "KC_KERNEL")
      .Case(kGlobal, "__global__")
      .Case(kBlockFeature, "__shared__")
      .Case(kVjp, "KC_VJP")
      .Case(kJvp, "KC_JVP")
      .Case(kElementwise, "KC_ELEMENTWISE")
      .Case(kParallel, "KC_PARALLEL")
      .Default("");
}

bool IsRoleAnnotation(llvm::StringRef a) {
  return a == kIn || a == kInMut || a == kOut || a == kDerived;
}
bool IsParamAnnotation(llvm::StringRef a) {
  return IsRoleAnnotation(a) || a == kShape || a == kInit || a == kTraced ||
         a == kOptional || a == kSum;
}
bool IsFunctionAnnotation(llvm::StringRef a) {
  return a == kGrid || a == kBlocks || a == kBlock || a == kSharedBytes ||
         a == kKernel || a == kGlobal || a == kVjp || a == kJvp ||
         a == kParallel || a == kElementwise;
}

std::vector<const clang::AnnotateAttr*> KcAnnotations(
    const clang::Decl* d, const clang::SourceManager& sm) {
  std::vector<const clang::AnnotateAttr*> out;
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>())
    if (a->getAnnotation().starts_with("kc.")) out.push_back(a);
  std::stable_sort(
      out.begin(), out.end(),
      [&sm](const clang::AnnotateAttr* a, const clang::AnnotateAttr* b) {
        return sm.isBeforeInTranslationUnit(sm.getFileLoc(a->getLocation()),
                                            sm.getFileLoc(b->getLocation()));
      });
  return out;
}

const clang::StringLiteral* AsStringLiteral(const clang::Expr* e) {
  if (e == nullptr) return nullptr;
  e = e->IgnoreParenImpCasts();
  while (const auto* c = llvm::dyn_cast<clang::ConstantExpr>(e))
    e = c->getSubExpr()->IgnoreParenImpCasts();
  const auto* lit = llvm::dyn_cast<clang::StringLiteral>(e);
  if (lit == nullptr || lit->getCharByteWidth() != 1) return nullptr;
  return lit;
}

}  // namespace kernelc::frontend

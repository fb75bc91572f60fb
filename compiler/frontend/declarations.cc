#include "compiler/frontend/declarations.h"

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <string>

#include "compiler/frontend/annotations.h"
#include "compiler/frontend/cpp_types.h"
#include "compiler/frontend/input_writes.h"
#include "compiler/frontend/block_features.h"
#include "compiler/frontend/grid_guard.h"
#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

using model::DeclaredKernel;
using model::DeclaredParam;

// The functions of the global namespace by name, extern "C" blocks
// included; templates are not kernels.
class GlobalFunctions : public clang::RecursiveASTVisitor<GlobalFunctions> {
 public:
  bool TraverseDecl(clang::Decl* d) {
    if (d == nullptr) return true;
    // Namespaces, classes and function bodies hold no such function.
    if (llvm::isa<clang::TranslationUnitDecl, clang::LinkageSpecDecl>(d))
      return clang::RecursiveASTVisitor<GlobalFunctions>::TraverseDecl(d);
    if (auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d))
      if (fd->getIdentifier() != nullptr &&
          fd->getDescribedFunctionTemplate() == nullptr)
        functions[fd->getName().str()].push_back(fd);
    return true;
  }

  std::map<std::string, std::vector<const clang::FunctionDecl*>> functions;
};

bool IsGlobal(const clang::FunctionDecl* fd, const clang::SourceManager& sm) {
  if (fd->hasAttr<clang::CUDAGlobalAttr>()) return true;
  // Read as the CPU sees a source, __global__ is kernelc/host.h's mark.
  for (const clang::AnnotateAttr* a : KcAnnotations(fd, sm))
    if (a->getAnnotation() == kGlobal) return true;
  return false;
}

DeclaredParam ReadParam(const clang::ParmVarDecl* pd,
                        const model::Param* spec_param,
                        const clang::FunctionDecl* fd,
                        clang::ASTContext& ctx) {
  const clang::SourceManager& sm = ctx.getSourceManager();
  DeclaredParam p;
  p.name = pd->getName().str();
  p.loc = ToSourceLoc(
      pd->getLocation().isValid() ? pd->getLocation() : pd->getBeginLoc(), sm);
  clang::QualType type = pd->getType();
  p.type = type.getAsString(ctx.getPrintingPolicy());
  clang::QualType canonical = ctx.getCanonicalType(type).getUnqualifiedType();
  if (std::optional<ViewType> view = AsView(canonical)) {
    p.kind = DeclaredParam::Kind::kView;
    p.view_role = view->role;
    p.view_rank = static_cast<int>(view->rank);
    p.dtype = ClassifyType(view->element, ctx).dtype;
  } else if (const auto* pointer = type->getAs<clang::PointerType>()) {
    p.kind = DeclaredParam::Kind::kPointer;
    p.const_data = pointer->getPointeeType().isConstQualified();
    p.dtype = ClassifyType(pointer->getPointeeType(), ctx).dtype;
  } else if (std::optional<model::DType> d = ClassifyType(type, ctx).dtype) {
    p.kind = DeclaredParam::Kind::kScalar;
    p.dtype = d;
  }
  const bool tensor = p.kind == DeclaredParam::Kind::kPointer ||
                      p.kind == DeclaredParam::Kind::kView;
  if (tensor && spec_param != nullptr && spec_param->role == model::Role::kIn) {
    if (std::optional<InputWrite> w = FindInputWrite(fd, pd, ctx)) {
      WritePlace place = PlaceOf(*w, sm);
      p.write = ToSourceLoc(place.at, sm);
      p.write_callee = place.callee;
    }
  }
  return p;
}

}  // namespace

void ReadDeclarations(clang::ASTContext& ctx,
                      const std::vector<const model::Kernel*>& kernels,
                      std::vector<model::DeclaredKernel*>& out) {
  const clang::SourceManager& sm = ctx.getSourceManager();
  GlobalFunctions all;
  all.TraverseDecl(ctx.getTranslationUnitDecl());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const model::Kernel& k = *kernels[i];
    DeclaredKernel& d = *out[i];
    auto it = all.functions.find(k.name);
    if (it == all.functions.end()) continue;
    const clang::FunctionDecl* def = nullptr;
    const clang::FunctionDecl* decl = nullptr;
    for (const clang::FunctionDecl* fd : it->second) {
      if (fd->doesThisDeclarationHaveABody()) {
        if (def == nullptr) def = fd;
      } else if (decl == nullptr) {
        decl = fd;
      }
    }
    if (def == nullptr) {
      if (decl != nullptr) d.loc = ToSourceLoc(decl->getLocation(), sm);
      continue;
    }
    d.loc = ToSourceLoc(def->getLocation(), sm);
    if (!sm.isInMainFile(sm.getFileLoc(def->getLocation()))) {
      d.in_header = true;
      continue;
    }
    d.defined = true;
    d.global = IsGlobal(def, sm);
    if (d.global) {
      d.guard = FindGridGuard(def, ctx);
      BlockUse block = FindBlockFeatures(def, sm);
      d.block_features = std::move(block.features);
      d.extern_shared = std::move(block.extern_shared);
    }
    for (unsigned p = 0; p < def->getNumParams(); ++p)
      d.params.push_back(ReadParam(
          def->getParamDecl(p), p < k.params.size() ? &k.params[p] : nullptr,
          def, ctx));
  }
}

}  // namespace kernelc::frontend

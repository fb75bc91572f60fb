// kernelc's annotations as Clang reads them. Each KC_* macro of kernelc.h
// (and, read as the CPU sees a source, kernelc/host.h's __global__ and the
// marks of block-level features) is an annotate attribute named "kc.*"
// whose arguments are the macro's.
#ifndef KERNELC_COMPILER_FRONTEND_ANNOTATIONS_H_
#define KERNELC_COMPILER_FRONTEND_ANNOTATIONS_H_

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/Basic/SourceManager.h>
#include <llvm/ADT/StringRef.h>

#include <vector>

namespace kernelc::frontend {

// Annotation names, as kernelc.h and kernelc/host.h spell them.
inline constexpr llvm::StringLiteral kIn = "kc.in";
inline constexpr llvm::StringLiteral kInMut = "kc.inmut";
inline constexpr llvm::StringLiteral kOut = "kc.out";
inline constexpr llvm::StringLiteral kShape = "kc.shape";
inline constexpr llvm::StringLiteral kInit = "kc.init";
inline constexpr llvm::StringLiteral kDerived = "kc.derived";
inline constexpr llvm::StringLiteral kGrid = "kc.grid";
inline constexpr llvm::StringLiteral kBlocks = "kc.blocks";
inline constexpr llvm::StringLiteral kTraced = "kc.traced";
inline constexpr llvm::StringLiteral kOptional = "kc.optional";
inline constexpr llvm::StringLiteral kSum = "kc.sum";
inline constexpr llvm::StringLiteral kBlock = "kc.block";
inline constexpr llvm::StringLiteral kSharedBytes = "kc.shared_bytes";
inline constexpr llvm::StringLiteral kKernel = "kc.kernel";
inline constexpr llvm::StringLiteral kGlobal = "kc.global";
inline constexpr llvm::StringLiteral kBlockFeature = "kc.block_feature";
// cooperative_groups::grid_group::sync of kernelc's stand-in header.
inline constexpr llvm::StringLiteral kGridSync = "kc.grid_sync";
inline constexpr llvm::StringLiteral kVjp = "kc.vjp";
inline constexpr llvm::StringLiteral kJvp = "kc.jvp";
inline constexpr llvm::StringLiteral kElementwise = "kc.elementwise";
inline constexpr llvm::StringLiteral kParallel = "kc.parallel";

// What the user wrote to get an annotation ("KC_IN", "__global__");
// empty for unknown ones.
llvm::StringRef SpelledName(llvm::StringRef annotation);

// KC_IN, KC_INMUT, KC_OUT and KC_DERIVED: one per parameter.
bool IsRoleAnnotation(llvm::StringRef a);
// The roles, KC_SHAPE, KC_INIT, KC_TRACED and KC_OPTIONAL.
bool IsParamAnnotation(llvm::StringRef a);
// Those of a kernel: launch configuration, kinds, autodiff, sharding.
bool IsFunctionAnnotation(llvm::StringRef a);

// The kernelc annotations of a declaration (those named "kc.*"), in source
// order.
std::vector<const clang::AnnotateAttr*> KcAnnotations(
    const clang::Decl* d, const clang::SourceManager& sm);

// The string literal an annotation argument is, through the implicit
// conversions and the ConstantExpr that Sema wraps it in; null when it is not
// an ordinary string literal.
const clang::StringLiteral* AsStringLiteral(const clang::Expr* e);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_ANNOTATIONS_H_

#include "compiler/frontend/cpp_types.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <llvm/ADT/APFloat.h>
#include <llvm/ADT/APSInt.h>
#include <llvm/ADT/StringExtras.h>

#include <cmath>
#include <cstdio>

namespace kernelc::frontend {

namespace {

using model::DType;
using model::Role;

bool InNamespaceKc(const clang::Decl* d) {
  const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d->getDeclContext());
  return ns != nullptr && ns->getName() == "kc" &&
         ns->getParent()->getRedeclContext()->isTranslationUnit();
}

// kc::half or kc::bfloat16 (which __half and __nv_bfloat16 name when a
// source is read as the CPU sees it), or CUDA's own __half and
// __nv_bfloat16 (read in CUDA mode).
std::optional<DType> AsHalfType(clang::QualType t) {
  const clang::CXXRecordDecl* rd = t->getAsCXXRecordDecl();
  if (rd == nullptr || rd->getIdentifier() == nullptr) return std::nullopt;
  llvm::StringRef name = rd->getName();
  if (InNamespaceKc(rd)) {
    if (name == "half") return DType::kF16;
    if (name == "bfloat16") return DType::kBF16;
  } else if (rd->getDeclContext()->getRedeclContext()->isTranslationUnit()) {
    if (name == "__half") return DType::kF16;
    if (name == "__nv_bfloat16") return DType::kBF16;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ViewType> AsView(clang::QualType t) {
  const auto* spec =
      llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
          t->getAsCXXRecordDecl());
  if (spec == nullptr) return std::nullopt;
  const clang::ClassTemplateDecl* tmpl = spec->getSpecializedTemplate();
  if (!InNamespaceKc(tmpl)) return std::nullopt;
  ViewType v;
  llvm::StringRef name = tmpl->getName();
  if (name == "In") {
    v.role = Role::kIn;
  } else if (name == "InMut") {
    v.role = Role::kInMut;
  } else if (name == "Out") {
    v.role = Role::kOut;
  } else {
    return std::nullopt;
  }
  const clang::TemplateArgumentList& args = spec->getTemplateArgs();
  if (args.size() != 2 || args[0].getKind() != clang::TemplateArgument::Type ||
      args[1].getKind() != clang::TemplateArgument::Integral)
    return std::nullopt;
  v.element = args[0].getAsType();
  v.rank = args[1].getAsIntegral().getExtValue();
  return v;
}

TypeClass ClassifyType(clang::QualType t, const clang::ASTContext& ctx) {
  TypeClass c;
  t = ctx.getCanonicalType(t).getUnqualifiedType();
  if (std::optional<DType> h = AsHalfType(t)) {
    c.dtype = h;
    return c;
  }
  const auto* bt = t->getAs<clang::BuiltinType>();
  if (bt == nullptr) return c;
  uint64_t bits = ctx.getTypeSize(t);
  auto sized = [&](bool is_signed) -> std::optional<DType> {
    switch (bits) {
      case 8:
        return is_signed ? DType::kI8 : DType::kU8;
      case 16:
        return is_signed ? DType::kI16 : DType::kU16;
      case 32:
        return is_signed ? DType::kI32 : DType::kU32;
      case 64:
        return is_signed ? DType::kI64 : DType::kU64;
      default:
        return std::nullopt;
    }
  };
  switch (bt->getKind()) {
    case clang::BuiltinType::Bool:
      c.dtype = DType::kBool;
      break;
    case clang::BuiltinType::Char_S:
    case clang::BuiltinType::Char_U:
      c.plain_char = true;
      break;
    case clang::BuiltinType::SChar:
    case clang::BuiltinType::Short:
    case clang::BuiltinType::Int:
    case clang::BuiltinType::Long:
    case clang::BuiltinType::LongLong:
      c.dtype = sized(true);
      break;
    case clang::BuiltinType::UChar:
    case clang::BuiltinType::UShort:
    case clang::BuiltinType::UInt:
    case clang::BuiltinType::ULong:
    case clang::BuiltinType::ULongLong:
      c.dtype = sized(false);
      break;
    case clang::BuiltinType::Float:
      c.dtype = DType::kF32;
      break;
    case clang::BuiltinType::Double:
      c.dtype = DType::kF64;
      break;
    default:
      break;
  }
  return c;
}

std::optional<std::string> ConstantText(const clang::APValue& v) {
  if (v.isInt()) return llvm::toString(v.getInt(), 10);
  if (!v.isFloat()) return std::nullopt;
  llvm::APFloat f = v.getFloat();
  bool lost = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  double d = f.convertToDouble();
  if (std::isnan(d)) return std::string("nan");
  if (std::isinf(d)) return std::string(d < 0 ? "-inf" : "inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return std::string(buf);
}

}  // namespace kernelc::frontend

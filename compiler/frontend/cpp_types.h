// The C++ types of kernel parameters, as the model classifies them: the
// kc::In/InMut/Out views, element and scalar types, and the constants of
// KC_INIT.
#ifndef KERNELC_COMPILER_FRONTEND_CPP_TYPES_H_
#define KERNELC_COMPILER_FRONTEND_CPP_TYPES_H_

#include <clang/AST/APValue.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Type.h>

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/model/model.h"

namespace kernelc::frontend {

// A kc::In / kc::InMut / kc::Out specialization.
struct ViewType {
  model::Role role = model::Role::kIn;
  clang::QualType element;  // T, as written in the template argument
  int64_t rank = 0;
};

// The view `t` is, when it is a kc::In, kc::InMut or kc::Out specialization.
std::optional<ViewType> AsView(clang::QualType t);

// The model type of an element or scalar C++ type.
struct TypeClass {
  std::optional<model::DType> dtype;
  bool plain_char = false;
};

// The class of an element or scalar type: bool, the integers by width and
// signedness, float, double, and the 16-bit floats (kernelc's kc::half and
// kc::bfloat16 read as the CPU sees a source, CUDA's __half and
// __nv_bfloat16 in CUDA mode). Plain char is set apart.
TypeClass ClassifyType(clang::QualType t, const clang::ASTContext& ctx);

// A constant in the canonical text form later stages parse: integers in
// decimal, floating-point values with 17 significant digits (exact for
// doubles), "inf", "-inf" and "nan"; nullopt for another kind of value.
std::optional<std::string> ConstantText(const clang::APValue& v);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_CPP_TYPES_H_

// What a C++ source states of a kernel that a JSON spec describes, read by
// the frontend from the kernel's definition, so that the spec can be checked
// against it (sema/source_check.h): an op built from a spec that contradicts
// its source would pass buffers that disagree with the kernel's types.
#ifndef KERNELC_COMPILER_MODEL_DECLARED_H_
#define KERNELC_COMPILER_MODEL_DECLARED_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/model/model.h"

namespace kernelc::model {

struct DeclaredParam {
  enum class Kind {
    kPointer,  // T*
    kView,     // kc::In, kc::InMut or kc::Out
    kScalar,   // an arithmetic type
    kOther,    // anything else
  };
  std::string name;  // empty for an unnamed parameter
  SourceLoc loc;     // its name (or its type, when unnamed)
  std::string type;  // as the source spells it: "const float *"
  Kind kind = Kind::kOther;
  // The pointee's, the view's element or the scalar's type; none when
  // kernelc supports no such type (plain char, a struct).
  std::optional<DType> dtype;
  bool const_data = false;     // kPointer: a pointer to const
  Role view_role = Role::kIn;  // kView: which view
  int view_rank = -1;          // kView: its rank
  // The first write through a pointer or view that the spec makes an input
  // (see frontend/input_writes.h), where it is in the user's code; and the
  // function called there when the write is a call that may write.
  std::optional<SourceLoc> write;
  std::string write_callee;
};

struct DeclaredKernel {
  // Whether the source itself defines a function of the kernel's name.
  bool defined = false;
  // The definition's name. When the source does not define one: a
  // definition in a header it includes (`in_header`) or a declaration
  // without a body, when there is one; empty otherwise.
  SourceLoc loc;
  bool in_header = false;
  bool global = false;  // __global__
  std::vector<DeclaredParam> params;
  // A __global__ definition's guard (model::GridGuard), block-level
  // features and `extern __shared__` arrays: what the source decides for a
  // spec's kernel, as it does for an annotated one.
  std::optional<GridGuard> guard;
  std::vector<BlockFeature> block_features;
  std::vector<ExternShared> extern_shared;
};

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_DECLARED_H_

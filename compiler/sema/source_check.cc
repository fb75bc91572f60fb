#include "compiler/sema/source_check.h"

#include <fmt/format.h>

namespace kernelc::sema {

namespace {

using diag::Id;
using model::DeclaredKernel;
using model::DeclaredParam;
using model::Param;
using model::Role;

// What the spec makes a parameter, in the words of the diagnostics.
const char* SpecKind(const Param& p) {
  switch (p.role) {
    case Role::kScalar:
      return "a scalar";
    case Role::kDerived:
      return "a derived value (an integer scalar)";
    default:
      return p.access == model::Access::kView
                 ? "a tensor view (kc::In, kc::InMut or kc::Out)"
                 : "a tensor passed as a pointer";
  }
}

// The kind of C++ parameter the spec's role and access need.
DeclaredParam::Kind NeededKind(const Param& p) {
  if (!model::IsTensor(p.role)) return DeclaredParam::Kind::kScalar;
  return p.access == model::Access::kView ? DeclaredParam::Kind::kView
                                          : DeclaredParam::Kind::kPointer;
}

class Checker {
 public:
  Checker(const SpecPlace& where, diag::DiagnosticEngine& diags)
      : where_(where), diags_(diags) {}

  void Check(const model::Kernel& k, const DeclaredKernel& d) {
    if (!d.defined) {
      Error<Id::kSpecKernelNotDefined>(Path("name"), k.name, k.source);
      if (d.in_header)
        diags_.Report<Id::kSpecKernelInHeader>(d.loc, k.name);
      else if (d.loc.has_position())
        diags_.Report<Id::kSpecKernelDeclaredOnly>(d.loc, k.name);
      return;
    }
    const bool global = k.kind == model::KernelKind::kGlobal;
    if (global != d.global) {
      Error<Id::kSpecKindMismatch>(Path("kind"), k.name,
                                   model::KernelKindName(k.kind),
                                   d.global ? "with" : "without");
      diags_.Report<Id::kSpecKernelDefinedHere>(d.loc, k.name);
    }
    if (k.params.size() != d.params.size()) {
      Error<Id::kSpecParamCount>(Path("params"), k.name, k.params.size(),
                                 k.params.size() == 1 ? "" : "s",
                                 d.params.size());
      diags_.Report<Id::kSpecKernelDefinedHere>(d.loc, k.name);
      return;
    }
    for (size_t i = 0; i < k.params.size(); ++i)
      Parameter(k, i, k.params[i], d.params[i]);
  }

 private:
  // The JSON path of a member of the kernel.
  std::string Path(const std::string& member) const {
    return fmt::format("{}.{}", where_.path, member);
  }

  template <Id kId, typename... Args>
  void Error(const std::string& path, const Args&... args) {
    diags_.Report<kId>(where_.places->At(path), path, args...);
  }

  void Parameter(const model::Kernel& k, size_t i, const Param& p,
                 const DeclaredParam& d) {
    const std::string path = fmt::format("{}.params[{}]", where_.path, i);
    const std::string role = path + ".role";
    auto note = [&] {
      diags_.Report<Id::kSpecParamDeclaredHere>(d.loc, d.name);
    };
    if (p.name != d.name) {
      Error<Id::kSpecParamName>(path + ".name", i + 1, k.name, p.name, d.name);
      note();
      return;
    }
    if (NeededKind(p) != d.kind) {
      // A pointer against a view: the access says which.
      Error<Id::kSpecParamKind>(
          model::IsTensor(p.role) &&
                  (d.kind == DeclaredParam::Kind::kPointer ||
                   d.kind == DeclaredParam::Kind::kView)
              ? path + ".access"
              : role,
          p.name, SpecKind(p), d.type);
      note();
      return;
    }
    if (!d.dtype || *d.dtype != p.dtype) {
      Error<Id::kSpecParamDtype>(
          path + ".dtype", p.name, model::DTypeName(p.dtype), d.type,
          d.dtype ? fmt::format("of dtype {}", model::DTypeName(*d.dtype))
                  : std::string("of a type that kernelc does not support"));
      note();
      return;
    }
    if (d.kind == DeclaredParam::Kind::kView) {
      if (d.view_role != p.role) {
        Error<Id::kSpecViewRole>(role, p.name, model::RoleName(p.role),
                                 d.type);
        note();
        return;
      }
      if (d.view_rank != p.rank) {
        Error<Id::kSpecViewRank>(path + ".rank", p.name, p.rank, d.type,
                                 d.view_rank);
        note();
        return;
      }
    }
    if (d.kind == DeclaredParam::Kind::kPointer && d.const_data &&
        p.role != Role::kIn) {
      Error<Id::kSpecParamConst>(
          role, p.name,
          p.role == Role::kOut ? "an output" : "an in-place input",
          model::RoleName(p.role), d.type);
      note();
      return;
    }
    if (p.role == Role::kIn && d.write) {
      Error<Id::kSpecInputWritten>(role, p.name, k.name);
      if (d.write_callee.empty())
        diags_.Report<Id::kSpecInputWrittenHere>(*d.write, p.name);
      else
        diags_.Report<Id::kSpecInputPassedHere>(*d.write, p.name,
                                                d.write_callee);
    }
  }

  const SpecPlace& where_;
  diag::DiagnosticEngine& diags_;
};

}  // namespace

Status CheckAgainstSources(const model::Module& spec,
                           const std::vector<DeclaredKernel>& declared,
                           const std::vector<SpecPlace>& where,
                           diag::DiagnosticEngine& diags) {
  const int errors_before = diags.error_count();
  for (size_t i = 0; i < spec.kernels.size(); ++i)
    Checker(where[i], diags).Check(spec.kernels[i], declared[i]);
  if (diags.error_count() > errors_before) return Error::Reported();
  return Status();
}

}  // namespace kernelc::sema

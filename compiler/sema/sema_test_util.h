// Fixtures shared by the sema tests: kernels built in code, with every
// annotation at a known line and column of one file, and an analysis that
// keeps the module alive for as long as its plan.
#ifndef KERNELC_COMPILER_SEMA_SEMA_TEST_UTIL_H_
#define KERNELC_COMPILER_SEMA_SEMA_TEST_UTIL_H_

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/expr/expr.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"
#include "compiler/util/status.h"

namespace kernelc::sema::testing {

using model::Access;
using model::DType;
using model::Kernel;
using model::KernelKind;
using model::Module;
using model::Param;
using model::Role;
using model::Text;

// Every test kernel lives in one file. Each parameter is declared on its own
// line: its annotation text (shape or derived expression) starts at column
// kTextCol, a KC_INIT value at kInitCol, and its name at kNameCol. The kernel
// name is on line 1; grid expressions are on line 2, kGridStride apart.
constexpr char kFile[] = "k.cu";
constexpr int kKernelLine = 1;
constexpr int kKernelCol = 17;
constexpr int kGridLine = 2;
constexpr int kTextCol = 10;
constexpr int kGridStride = 20;
constexpr int kInitCol = 60;
constexpr int kNameCol = 40;

inline diag::SourceLoc At(int line, int col) {
  return diag::SourceLoc{kFile, line, col};
}

inline Param Tensor(Role role, const std::string& name,
                    const std::string& shape, int line,
                    DType dtype = DType::kF32) {
  Param p;
  p.name = name;
  p.role = role;
  p.dtype = dtype;
  p.shape = Text{shape, At(line, kTextCol)};
  p.loc = At(line, kNameCol);
  return p;
}

inline Param In(const std::string& name, const std::string& shape, int line,
                DType dtype = DType::kF32) {
  return Tensor(Role::kIn, name, shape, line, dtype);
}

inline Param Out(const std::string& name, const std::string& shape, int line,
                 DType dtype = DType::kF32) {
  return Tensor(Role::kOut, name, shape, line, dtype);
}

inline Param OutInit(const std::string& name, DType dtype,
                     const std::string& init, int line) {
  Param p = Out(name, "n", line, dtype);
  p.init = Text{init, At(line, kInitCol)};
  return p;
}

// A kc::In / kc::Out view of the given rank, with KC_SHAPE(shape) when
// `shape` is not null.
inline Param View(Role role, const std::string& name, int rank,
                  const char* shape, int line) {
  Param p = Tensor(role, name, shape ? shape : "", line);
  p.access = Access::kView;
  p.rank = rank;
  if (!shape) p.shape.reset();
  return p;
}

inline Param Scalar(const std::string& name, DType dtype, int line) {
  Param p;
  p.name = name;
  p.role = Role::kScalar;
  p.dtype = dtype;
  p.loc = At(line, kNameCol);
  return p;
}

inline Param Derived(const std::string& name, const std::string& expr, int line,
                     DType dtype = DType::kI64) {
  Param p;
  p.name = name;
  p.role = Role::kDerived;
  p.dtype = dtype;
  p.derived = Text{expr, At(line, kTextCol)};
  p.loc = At(line, kNameCol);
  return p;
}

inline Kernel Global(const std::string& name,
                     const std::vector<std::string>& grid,
                     std::vector<Param> params, int line = kKernelLine) {
  Kernel k;
  k.name = name;
  k.kind = KernelKind::kGlobal;
  for (size_t g = 0; g < grid.size(); ++g) {
    k.grid.push_back(Text{
        grid[g], At(kGridLine, kTextCol + kGridStride * static_cast<int>(g))});
  }
  k.params = std::move(params);
  k.source = kFile;
  k.loc = At(line, kKernelCol);
  return k;
}

inline Kernel Host(const std::string& name, std::vector<Param> params) {
  Kernel k = Global(name, {}, std::move(params));
  k.kind = KernelKind::kHost;
  return k;
}

// The line of the output that Analysis gives a kernel without results.
constexpr int kResultLine = 90;

// Runs sema over a module of the given kernels and keeps the module alive
// for as long as the plan that points into it. Sema refuses a kernel
// without results (no Out, no InMut); most tests are about other rules, so
// such a kernel gets an Out of shape "1" after its parameters, on line
// kResultLine, unless `add_result` is false.
class Analysis {
 public:
  explicit Analysis(std::vector<Kernel> kernels, bool add_result = true) {
    module_.sources = {kFile};
    module_.kernels = std::move(kernels);
    if (add_result) {
      for (Kernel& k : module_.kernels)
        if (std::none_of(k.params.begin(), k.params.end(), [](const Param& p) {
              return model::IsResult(p.role);
            }))
          k.params.push_back(Tensor(Role::kOut, "result_", "1", kResultLine));
    }
    result_.emplace(Analyze(module_, diags_));
  }
  explicit Analysis(Kernel kernel, bool add_result = true)
      : Analysis(std::vector<Kernel>{std::move(kernel)}, add_result) {}
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  bool ok() const { return result_->ok(); }
  const Result<ModulePlan>& result() const { return *result_; }

  // The plan of kernel `i`; the analysis must have succeeded.
  const KernelPlan& plan(size_t i = 0) const {
    if (!ok()) FAIL("sema failed:\n" << Joined());
    REQUIRE(i < result_->value().kernels.size());
    return result_->value().kernels[i];
  }

  // Every diagnostic as "file:line:col: severity: message".
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const diag::Diagnostic& d : diags_.diagnostics()) {
      out.push_back(diag::Headline(d));
    }
    return out;
  }

 private:
  std::string Joined() const {
    std::string s;
    for (const std::string& m : messages()) s += m + "\n";
    return s;
  }

  Module module_;
  diag::DiagnosticEngine diags_;
  std::optional<Result<ModulePlan>> result_;
};

// The diagnostics of a kernel that sema must reject.
inline std::vector<std::string> Errors(Kernel kernel) {
  Analysis a(std::move(kernel));
  CHECK_FALSE(a.ok());
  if (!a.ok()) {
    CHECK(a.result().error().kind == ErrorKind::kReported);
  }
  return a.messages();
}

using Strings = std::vector<std::string>;

inline std::string Str(const expr::NodePtr& e) {
  return e ? expr::ToString(e) : "<null>";
}

inline Strings Strs(const std::vector<expr::NodePtr>& es) {
  Strings out;
  for (const expr::NodePtr& e : es) out.push_back(Str(e));
  return out;
}

// A symbol as "name=param:dim", a check as "param:dim=text".
inline Strings SymbolStrs(const KernelPlan& p) {
  Strings out;
  for (const Symbol& s : p.symbols) {
    out.push_back(s.name + "=" + std::to_string(s.param) + ":" +
                  std::to_string(s.dim));
  }
  return out;
}

inline Strings CheckStrs(const KernelPlan& p) {
  Strings out;
  for (const DimCheck& c : p.checks) {
    out.push_back(std::to_string(c.param) + ":" + std::to_string(c.dim) + "=" +
                  c.text);
    CHECK(Str(c.expr) == c.text);
  }
  return out;
}

// Each parameter of a pairing kernel as "<kind> <index in the forward
// kernel>".
inline Strings Roles(const Pairing& pairing) {
  Strings out;
  for (const PairedParam& p : pairing.params) {
    const char* kind = "computed";
    if (p.kind == PairedParam::Kind::kStatic) kind = "static";
    if (p.kind == PairedParam::Kind::kValue) kind = "value";
    if (p.kind == PairedParam::Kind::kDerivative) kind = "derivative";
    out.push_back(std::string(kind) + " " + std::to_string(p.of));
  }
  return out;
}

}  // namespace kernelc::sema::testing

#endif  // KERNELC_COMPILER_SEMA_SEMA_TEST_UTIL_H_

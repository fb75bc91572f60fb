#include "compiler/sema/sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace kernelc::sema {

using model::Kernel;
using model::Param;
using model::Role;
using model::Text;

expr::NameKind KernelPlan::KindOf(std::string_view name) const {
  for (size_t i = 0; i < kernel->params.size(); ++i) {
    const Param& p = kernel->params[i];
    if (p.name != name) continue;
    switch (p.role) {
      case Role::kIn:
      case Role::kInMut:
      case Role::kOut:
        return expr::NameKind::kTensor;
      case Role::kDerived:
        return expr::NameKind::kIntValue;
      case Role::kScalar:
        return model::IsInteger(p.dtype) ? expr::NameKind::kIntValue
                                         : expr::NameKind::kFloatValue;
    }
  }
  for (const Symbol& s : symbols)
    if (s.name == name) return expr::NameKind::kSymbol;
  return expr::NameKind::kUnknown;
}

namespace {

bool IsInput(Role r) { return r == Role::kIn || r == Role::kInMut; }
bool IsResult(Role r) { return r == Role::kOut || r == Role::kInMut; }

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// One resolved dimension of a tensor's shape.
struct DimSpec {
  bool any = false;
  expr::NodePtr expr;
  std::string text;
  diag::SourceLoc loc;  // the dimension's first character
  diag::SourceLoc
      text_loc;  // the shape text's start: node offsets count from it
  // Copied from another tensor's shape ("same shape as x"): diagnostics
  // about the dimension belong to that tensor.
  bool copied = false;
};

expr::NodePtr ShapeRef(const std::string& tensor, int dim) {
  auto n = std::make_shared<expr::Node>();
  n->kind = expr::Node::Kind::kShape;
  n->name = tensor;
  n->value = dim;
  return n;
}

class KernelAnalyzer {
 public:
  KernelAnalyzer(const Kernel& k, diag::DiagnosticSink& diags)
      : k_(k), diags_(diags) {
    plan_.kernel = &k;
    plan_.params.resize(k.params.size());
  }

  KernelPlan Run() {
    CheckParams();
    if (!params_ok_) return std::move(plan_);
    ResolveShapes();
    BindSymbols();
    AnalyzeDerived();
    AnalyzeChecks();
    AnalyzeOutputs();
    AnalyzeGrid();
    AnalyzeSharedBytes();
    AnalyzeInits();
    AnalyzeParallel();
    AnalyzeElementwise();
    return std::move(plan_);
  }

 private:
  void Error(const diag::SourceLoc& loc, std::string message) {
    diags_.Error(loc, std::move(message));
  }

  int IndexOf(std::string_view name) const { return k_.IndexOf(name); }

  void CheckParams() {
    if (!IsIdentifier(k_.name))
      Error(k_.loc,
            fmt::format("kernel name '{}' is not an identifier", k_.name));
    std::map<std::string, int> seen;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!IsIdentifier(p.name)) {
        Error(p.loc, fmt::format("parameter name '{}' of kernel '{}' is not "
                                 "an identifier",
                                 p.name, k_.name));
        params_ok_ = false;
        continue;
      }
      if (!seen.emplace(p.name, static_cast<int>(i)).second) {
        Error(p.loc, fmt::format("parameter '{}' of kernel '{}' is declared "
                                 "twice",
                                 p.name, k_.name));
        params_ok_ = false;
      }
      if (p.role == Role::kScalar &&
          (p.dtype == model::DType::kF16 || p.dtype == model::DType::kBF16)) {
        Error(p.loc, fmt::format("scalar '{}' has type {}: XLA attributes "
                                 "cannot carry 16-bit floats; use float",
                                 p.name, model::DTypeName(p.dtype)));
      }
      if (p.role == Role::kDerived) {
        if (!model::IsInteger(p.dtype))
          Error(p.loc, fmt::format("derived parameter '{}' must have an "
                                   "integer type, not {}",
                                   p.name, model::DTypeName(p.dtype)));
        if (!p.derived) {
          Error(p.loc, fmt::format("derived parameter '{}' has no expression",
                                   p.name));
          params_ok_ = false;
        }
      }
      if (p.init && p.role != Role::kOut)
        Error(p.init->loc, fmt::format("KC_INIT applies to outputs; '{}' is "
                                       "not one",
                                       p.name));
      if (model::IsTensor(p.role) && p.access == model::Access::kView &&
          p.rank < 0) {
        Error(p.loc, fmt::format("view parameter '{}' of kernel '{}' needs a "
                                 "rank",
                                 p.name, k_.name));
        params_ok_ = false;
        continue;
      }
      if (model::IsTensor(p.role) && !p.shape &&
          (p.access == model::Access::kPointer || p.role == Role::kOut)) {
        Error(p.loc, fmt::format("tensor parameter '{}' of kernel '{}' needs "
                                 "a shape",
                                 p.name, k_.name));
        params_ok_ = false;
      }
    }
    if (k_.kind == model::KernelKind::kGlobal) {
      if (k_.grid.empty() || k_.grid.size() > 3)
        Error(k_.loc, fmt::format("__global__ kernel '{}' needs a grid of 1 "
                                  "to 3 expressions, has {}",
                                  k_.name, k_.grid.size()));
      if (!k_.block.empty()) {
        // Each factor is capped first, so the product cannot overflow.
        int64_t threads = 1;
        bool positive = true;
        for (int64_t b : k_.block) {
          positive = positive && b >= 1;
          threads *= std::min<int64_t>(b >= 1 ? b : 1, 1025);
        }
        if (k_.block.size() != k_.grid.size())
          Error(k_.loc, fmt::format("kernel '{}' has a {}-dimensional grid "
                                    "but a {}-dimensional block",
                                    k_.name, k_.grid.size(), k_.block.size()));
        else if (!positive || threads > 1024)
          Error(k_.loc, fmt::format("kernel '{}': block dimensions must be "
                                    "positive with at most 1024 threads in "
                                    "all",
                                    k_.name));
      }
      plan_.block = k_.block.empty()
                        ? model::DefaultBlock(static_cast<int>(k_.grid.size()))
                        : k_.block;
      plan_.block.resize(std::min<size_t>(plan_.block.size(), 3));
    } else if (!k_.grid.empty() || !k_.block.empty()) {
      Error(k_.loc, fmt::format("host kernel '{}' runs once per call and "
                                "takes no grid or block",
                                k_.name));
    }
  }

  // Parses every tensor's shape and resolves "same shape as tensor t"
  // references, so each tensor has a rank and one DimSpec per dimension.
  void ResolveShapes() {
    specs_.resize(k_.params.size());
    state_.assign(k_.params.size(), Resolution::kPending);
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (model::IsTensor(k_.params[i].role)) Resolve(static_cast<int>(i));
  }

  bool Resolved(size_t i) const {
    return i < state_.size() && state_[i] == Resolution::kResolved;
  }

  bool Resolve(int i) {
    if (state_[i] == Resolution::kResolved) return true;
    if (state_[i] == Resolution::kFailed) return false;
    const Param& p = k_.params[i];
    if (state_[i] == Resolution::kInProgress) {
      Error(p.shape->loc, fmt::format("the shape of '{}' refers to itself "
                                      "through other tensors' shapes",
                                      p.name));
      return false;
    }
    state_[i] = Resolution::kInProgress;
    bool ok = ResolveOne(i);
    state_[i] = ok ? Resolution::kResolved : Resolution::kFailed;
    if (ok) plan_.params[i].rank = static_cast<int>(specs_[i].size());
    return ok;
  }

  bool ResolveOne(int i) {
    const Param& p = k_.params[i];
    std::vector<DimSpec>& out = specs_[i];
    std::vector<std::string>& symbols = plan_.params[i].dim_symbols;
    if (!p.shape) {  // an input view without KC_SHAPE: any extents
      out.assign(p.rank, DimSpec{true, nullptr, "_", p.loc, p.loc});
      symbols.assign(p.rank, "");
      plan_.params[i].dim_texts.assign(p.rank, "_");
      return true;
    }
    auto parsed = expr::ParseShape(p.shape->text);
    if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
      Error(p.shape->loc.Shifted(err->offset),
            fmt::format("in the shape of '{}': {}", p.name, err->message));
      return false;
    }
    const std::vector<expr::Dim>& dims =
        std::get<std::vector<expr::Dim>>(parsed);
    // A shape that is the bare name of another tensor: the same shape.
    if (dims.size() == 1 && !dims[0].any &&
        dims[0].expr->kind == expr::Node::Kind::kName) {
      int ref = IndexOf(dims[0].expr->name);
      if (ref >= 0 && model::IsTensor(k_.params[ref].role)) {
        if (ref == i) {
          Error(p.shape->loc,
                fmt::format("the shape of '{}' refers to itself", p.name));
          return false;
        }
        if (!Resolve(ref)) return false;
        const Param& r = k_.params[ref];
        int rank = static_cast<int>(specs_[ref].size());
        symbols = plan_.params[ref].dim_symbols;
        plan_.params[i].dim_texts = plan_.params[ref].dim_texts;
        for (int d = 0; d < rank; ++d) {
          // Outputs have no array at trace time: take the dimension
          // expressions of an output; an input's dimensions are read off it.
          if (r.role == Role::kOut && !specs_[ref][d].any) {
            out.push_back(specs_[ref][d]);
          } else {
            out.push_back(DimSpec{false, ShapeRef(r.name, d),
                                  fmt::format("{}.shape[{}]", r.name, d),
                                  p.shape->loc, p.shape->loc});
          }
          out.back().copied = true;
        }
        return CheckViewRank(p, rank);
      }
    }
    for (const expr::Dim& d : dims) {
      DimSpec s;
      s.any = d.any;
      s.expr = d.expr;
      s.text = p.shape->text.substr(d.begin, d.end - d.begin);
      s.loc = p.shape->loc.Shifted(d.begin);
      s.text_loc = p.shape->loc;
      symbols.push_back(!s.any && s.expr->kind == expr::Node::Kind::kName &&
                                !IsScalarName(s.expr->name)
                            ? s.expr->name
                            : "");
      plan_.params[i].dim_texts.push_back(s.any ? "_" : expr::ToString(s.expr));
      out.push_back(std::move(s));
    }
    return CheckViewRank(p, static_cast<int>(dims.size()));
  }

  bool CheckViewRank(const Param& p, int rank) {
    if (p.access == model::Access::kView && p.rank >= 0 && p.rank != rank) {
      Error(p.shape->loc,
            fmt::format("the shape of '{}' has {} dimension{} "
                        "but its type has rank {}",
                        p.name, rank, rank == 1 ? "" : "s", p.rank));
      return false;
    }
    return true;
  }

  bool IsParamName(std::string_view n) const { return IndexOf(n) >= 0; }
  bool IsScalarName(std::string_view n) const {
    int i = IndexOf(n);
    return i >= 0 && k_.params[i].role == Role::kScalar;
  }

  void BindSymbols() {
    std::set<std::string> bound;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!IsInput(p.role) || !Resolved(i)) continue;
      ParamPlan& pp = plan_.params[i];
      for (size_t d = 0; d < specs_[i].size(); ++d) {
        const DimSpec& s = specs_[i][d];
        pp.any_dim.push_back(s.any);
        if (s.any) continue;
        if (s.expr->kind == expr::Node::Kind::kName &&
            !IsParamName(s.expr->name) && !bound.count(s.expr->name)) {
          bound.insert(s.expr->name);
          plan_.symbols.push_back(
              {s.expr->name, static_cast<int>(i), static_cast<int>(d)});
          continue;
        }
        pending_checks_.push_back({static_cast<int>(i), static_cast<int>(d)});
      }
    }
  }

  // Checks an expression against the kernel's names. `inputs_only`: tensors
  // it reads must be inputs (the Python side has no output arrays).
  bool CheckExpr(const expr::NodePtr& e, const diag::SourceLoc& loc,
                 const std::string& what, bool inputs_only) {
    expr::Scope scope;
    scope.kind = [this](std::string_view n) { return plan_.KindOf(n); };
    scope.tensor_rank = [this](std::string_view n) {
      int i = IndexOf(n);
      return i >= 0 ? plan_.params[i].rank : -1;
    };
    if (auto err = expr::Check(e, scope)) {
      std::string message = err->message;
      if (message.rfind("unknown name", 0) == 0)
        message += ": not a parameter, and no input shape binds it";
      Error(loc.Shifted(err->offset), fmt::format("{}: {}", what, message));
      return false;
    }
    if (inputs_only) {
      for (const std::string& n : expr::NamesUsed(e)) {
        int i = IndexOf(n);
        if (i >= 0 && k_.params[i].role == Role::kOut) {
          Error(loc.Shifted(std::max(0, FirstUse(e, n))),
                fmt::format("{}: '{}' is an output; only inputs, "
                            "symbols and scalars can be used here",
                            what, n));
          return false;
        }
      }
    }
    return true;
  }

  // The offset of the first node of `e` that names `name`.
  static int FirstUse(const expr::NodePtr& e, const std::string& name) {
    if (e->name == name && e->kind != expr::Node::Kind::kCall) return e->begin;
    for (const expr::NodePtr& a : e->args) {
      int at = FirstUse(a, name);
      if (at >= 0) return at;
    }
    return -1;
  }

  void AnalyzeDerived() {
    std::vector<int> derived;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.role != Role::kDerived) continue;
      auto parsed = expr::Parse(p.derived->text);
      if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
        Error(p.derived->loc.Shifted(err->offset),
              fmt::format("in derived value '{}': {}", p.name, err->message));
        continue;
      }
      expr::NodePtr e = std::get<expr::NodePtr>(parsed);
      if (!CheckExpr(e, p.derived->loc,
                     fmt::format("in derived value '{}'", p.name),
                     /*inputs_only=*/true))
        continue;
      plan_.params[i].derived = e;
      derived.push_back(static_cast<int>(i));
    }
    // Derived values may use each other: evaluate in dependency order.
    std::vector<int> state(k_.params.size(), 0);
    std::function<bool(int)> visit = [&](int i) -> bool {
      if (state[i] == 2) return true;
      if (state[i] == 1) {
        Error(k_.params[i].derived->loc,
              fmt::format("derived value '{}' depends on itself",
                          k_.params[i].name));
        return false;
      }
      state[i] = 1;
      for (const std::string& n : expr::NamesUsed(plan_.params[i].derived)) {
        int j = IndexOf(n);
        if (j >= 0 && k_.params[j].role == Role::kDerived &&
            plan_.params[j].derived && !visit(j))
          return false;
      }
      state[i] = 2;
      plan_.derived_order.push_back(i);
      return true;
    };
    for (int i : derived)
      if (!visit(i)) break;
  }

  void AnalyzeChecks() {
    for (auto [i, d] : pending_checks_) {
      const DimSpec& s = specs_[i][d];
      std::string what = fmt::format("in the shape of '{}'", k_.params[i].name);
      if (!CheckExpr(s.expr, s.text_loc, what, /*inputs_only=*/true)) continue;
      plan_.checks.push_back({i, d, s.expr, s.text});
    }
  }

  void AnalyzeOutputs() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.role != Role::kOut || !Resolved(i)) continue;
      ParamPlan& pp = plan_.params[i];
      for (const DimSpec& s : specs_[i]) {
        if (s.any) {
          Error(s.loc, fmt::format("the shape of output '{}' cannot contain "
                                   "'_': its dimensions must be computable "
                                   "from inputs and scalars",
                                   p.name));
          continue;
        }
        if (!CheckExpr(s.expr, s.text_loc,
                       fmt::format("in the shape of output '{}'", p.name),
                       /*inputs_only=*/true))
          continue;
        pp.out_dims.push_back(s.expr);
        pp.out_dim_texts.push_back(s.text);
      }
    }
  }

  void AnalyzeGrid() {
    for (size_t g = 0; g < k_.grid.size() && g < 3; ++g) {
      const Text& t = k_.grid[g];
      auto parsed = expr::Parse(t.text);
      if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
        Error(t.loc.Shifted(err->offset),
              fmt::format("in the grid of '{}': {}", k_.name, err->message));
        continue;
      }
      expr::NodePtr e = std::get<expr::NodePtr>(parsed);
      if (CheckExpr(e, t.loc, fmt::format("in the grid of '{}'", k_.name),
                    /*inputs_only=*/false))
        plan_.grid.push_back(e);
    }
  }

  void AnalyzeSharedBytes() {
    if (!k_.shared_bytes) return;
    const Text& t = *k_.shared_bytes;
    std::string what = fmt::format("in KC_SHARED_BYTES of '{}'", k_.name);
    auto parsed = expr::Parse(t.text);
    if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
      Error(t.loc.Shifted(err->offset),
            fmt::format("{}: {}", what, err->message));
      return;
    }
    expr::NodePtr e = std::get<expr::NodePtr>(parsed);
    if (CheckExpr(e, t.loc, what, /*inputs_only=*/false))
      plan_.shared_bytes = e;
  }

  void AnalyzeInits() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!p.init || p.role != Role::kOut) continue;
      if (auto v = ParseInit(p)) plan_.params[i].init = *v;
    }
  }

  // KC_PARALLEL. Under sharding each device runs the kernel on its shard,
  // and everything computed from shapes (symbols, derived values, output
  // shapes, the grid) is computed from the shard's extents. The local
  // results are slices of the whole ones only when:
  //  - each name is a whole dimension of an input (a shard of it is a shard
  //    of the inputs, and its local value comes from a local shape), and at
  //    most one dimension of any tensor;
  //  - every output has each name as a whole dimension: a device writes
  //    only its slice of every output, so an output without the dimension
  //    would hold one device's partial result;
  //  - a dimension that depends on a name, directly or through sizes,
  //    shapes and derived values, is that name: every other dimension is
  //    replicated and must have its whole extent on each shard;
  //  - a named derived value depends on a parallel dimension, or it would
  //    keep its whole value on a shard whose dimensions it sizes.
  void AnalyzeParallel() {
    // The names that are whole dimensions of inputs, shape symbols or
    // derived values: dependencies are traced to these.
    std::set<std::string> parallel;
    for (const Text& t : k_.parallel)
      for (size_t i = 0; i < k_.params.size(); ++i)
        if (IsInput(k_.params[i].role) && Resolved(i))
          for (const std::string& s : plan_.params[i].dim_symbols)
            if (s == t.text) parallel.insert(s);
    ParallelDeps deps(*this, parallel);
    std::set<std::string> seen;
    for (const Text& t : k_.parallel) {
      if (!seen.insert(t.text).second) {
        Error(t.loc, fmt::format("KC_PARALLEL of kernel '{}' names '{}' twice",
                                 k_.name, t.text));
        continue;
      }
      if (!parallel.count(t.text)) {
        Error(t.loc,
              fmt::format("KC_PARALLEL of kernel '{}' names '{}', which is "
                          "not a dimension of an input: name a shape symbol "
                          "or derived value that an input shape uses",
                          k_.name, t.text));
        continue;
      }
      bool ok = true;
      auto fail = [&](std::string message) {
        Error(t.loc, fmt::format("KC_PARALLEL of kernel '{}' names '{}'{}",
                                 k_.name, t.text, message));
        ok = false;
      };
      for (size_t i = 0; i < k_.params.size(); ++i) {
        if (!Resolved(i)) continue;
        const Param& p = k_.params[i];
        const std::vector<std::string>& labels = plan_.params[i].dim_symbols;
        // Dimensions that use the name, or depend on it, without being it.
        bool uses = false;
        for (size_t d = 0; d < specs_[i].size(); ++d) {
          const DimSpec& s = specs_[i][d];
          if (s.any || s.copied || parallel.count(labels[d])) continue;
          std::vector<std::string> used = expr::NamesUsed(s.expr);
          if (std::find(used.begin(), used.end(), t.text) != used.end()) {
            fail(
                fmt::format(", but the shape of '{}' uses it in '{}'; a "
                            "parallel symbol must be a whole dimension",
                            p.name, s.text));
            uses = true;
            continue;
          }
          bool direct = false;  // on another parallel name: reported there
          for (const std::string& n : used) direct |= parallel.count(n) > 0;
          if (direct || deps.OfExpr(s.expr) != t.text) continue;
          fail(
              fmt::format(", and dimension '{}' of '{}' depends on it, so "
                          "each device would compute that dimension from "
                          "its own shard; a dimension that depends on a "
                          "parallel symbol must be that symbol",
                          s.text, p.name));
          uses = true;
        }
        long count = std::count(labels.begin(), labels.end(), t.text);
        if (count > 1)
          fail(
              fmt::format(", which is {} dimensions of '{}'; a parallel "
                          "symbol can be at most one dimension of each "
                          "tensor",
                          count, p.name));
        if (IsResult(p.role) && count == 0 && !uses)
          fail(
              fmt::format(", but {} '{}' has no dimension '{}'; each device "
                          "writes only its slice of every output, so every "
                          "output needs each parallel symbol as a whole "
                          "dimension",
                          p.role == Role::kOut ? "output" : "in-place output",
                          p.name, t.text));
      }
      int j = IndexOf(t.text);
      if (j >= 0 && k_.params[j].role == Role::kDerived &&
          plan_.params[j].derived &&
          deps.OfExpr(plan_.params[j].derived).empty())
        fail(
            fmt::format(", a derived value ('{}') that depends on no "
                        "parallel dimension; on a shard it would keep its "
                        "whole value: derive it from a tensor that '{}' is "
                        "a dimension of",
                        k_.params[j].derived->text, t.text));
      if (ok) plan_.parallel.push_back(t.text);
    }
  }

  // Which parallel symbol an expression depends on: directly, through a
  // tensor's size or a dimension of its shape (a dimension that is a
  // parallel symbol, or is checked against an expression that depends on
  // one), or through derived values.
  class ParallelDeps {
   public:
    ParallelDeps(const KernelAnalyzer& a, const std::set<std::string>& parallel)
        : a_(a), parallel_(parallel) {}

    // The first parallel symbol `e` depends on, or "".
    std::string OfExpr(const expr::NodePtr& e) {
      using Kind = expr::Node::Kind;
      switch (e->kind) {
        case Kind::kName: {
          if (parallel_.count(e->name)) return e->name;
          int j = a_.IndexOf(e->name);
          if (j < 0 || a_.k_.params[j].role != Role::kDerived ||
              !a_.plan_.params[j].derived)
            return "";
          auto [it, fresh] = derived_.emplace(j, "");
          if (fresh) it->second = OfExpr(a_.plan_.params[j].derived);
          return it->second;
        }
        case Kind::kSize: {
          int j = a_.IndexOf(e->name);
          if (j < 0 || !a_.Resolved(j)) return "";
          for (size_t d = 0; d < a_.specs_[j].size(); ++d) {
            std::string dep = OfDim(j, static_cast<int>(d));
            if (!dep.empty()) return dep;
          }
          return "";
        }
        case Kind::kShape: {
          int j = a_.IndexOf(e->name);
          if (j < 0 || !a_.Resolved(j) || e->value < 0 ||
              e->value >= static_cast<int64_t>(a_.specs_[j].size()))
            return "";
          return OfDim(j, static_cast<int>(e->value));
        }
        default:
          for (const expr::NodePtr& arg : e->args) {
            std::string dep = OfExpr(arg);
            if (!dep.empty()) return dep;
          }
          return "";
      }
    }

   private:
    std::string OfDim(int i, int d) {
      const std::string& label = a_.plan_.params[i].dim_symbols[d];
      if (parallel_.count(label)) return label;
      const DimSpec& s = a_.specs_[i][d];
      if (s.any) return "";
      // A dimension checked against an expression that reaches the
      // dimension again ("n" with derived n = x.size) adds nothing.
      auto [it, fresh] = dims_.emplace(std::make_pair(i, d), "");
      if (fresh) it->second = OfExpr(s.expr);
      return it->second;
    }

    const KernelAnalyzer& a_;
    const std::set<std::string>& parallel_;
    std::map<int, std::string> derived_;
    std::map<std::pair<int, int>, std::string> dims_;
  };

  // KC_ELEMENTWISE: every tensor has the first tensor's shape, of rank 1 or
  // more and with no "_" dimension, so that a batch folds into dimension 0.
  void AnalyzeElementwise() {
    if (!k_.elementwise) return;
    const Param* first = nullptr;
    const std::vector<std::string>* shape = nullptr;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!model::IsTensor(p.role) || !Resolved(i)) continue;
      const std::vector<std::string>& dims = plan_.params[i].dim_texts;
      std::string text = fmt::format("({})", fmt::join(dims, ", "));
      if (dims.empty() ||
          std::find(dims.begin(), dims.end(), "_") != dims.end()) {
        Error(p.loc, fmt::format("KC_ELEMENTWISE kernel '{}' needs tensors "
                                 "of known extents and rank 1 or more; '{}' "
                                 "has shape {}",
                                 k_.name, p.name, text));
        return;
      }
      if (!first) {
        first = &p;
        shape = &dims;
      } else if (dims != *shape) {
        Error(p.loc,
              fmt::format("KC_ELEMENTWISE kernel '{}' needs every tensor to "
                          "have one shape: '{}' has shape {}, '{}' has ({})",
                          k_.name, p.name, text, first->name,
                          fmt::join(*shape, ", ")));
        return;
      }
    }
  }

  std::optional<InitValue> ParseInit(const Param& p) {
    const std::string& s = p.init->text;
    InitValue v;
    v.text = s;
    char* end = nullptr;
    errno = 0;
    long long ll = std::strtoll(s.c_str(), &end, 10);
    bool is_int = !s.empty() && *end == '\0' && errno == 0;
    if (!is_int && !s.empty() && s[0] != '-') {
      errno = 0;
      unsigned long long ull = std::strtoull(s.c_str(), &end, 10);
      if (*end == '\0' && errno == 0) {
        is_int = true;
        v.is_unsigned_large = true;
        v.unsigned_integer = ull;
      }
    }
    if (is_int) {
      v.is_integer = true;
      v.integer = ll;
      v.real = v.is_unsigned_large ? static_cast<double>(v.unsigned_integer)
                                   : static_cast<double>(ll);
    } else {
      // Decimal numbers only (strtod also reads hex and skips spaces), and
      // a finite value must not overflow to infinity.
      errno = 0;
      double d = std::strtod(s.c_str(), &end);
      bool special = s == "inf" || s == "-inf" || s == "nan";
      if (s.empty() || *end != '\0' ||
          std::isspace(static_cast<unsigned char>(s[0])) ||
          s.find_first_of("xX") != std::string::npos ||
          (!special && std::isinf(d))) {
        Error(p.init->loc,
              fmt::format("KC_INIT value '{}' of '{}' is not a number", s,
                          p.name));
        return std::nullopt;
      }
      v.is_integer = false;
      v.real = d;
    }
    model::DType t = p.dtype;
    if (model::IsFloat(t)) {
      double max = t == model::DType::kF16    ? 65504.0
                   : t == model::DType::kBF16 ? 3.3895313892515355e38
                   : t == model::DType::kF32
                       ? 3.4028234663852886e38
                       : std::numeric_limits<double>::max();
      if (std::isfinite(v.real) && std::fabs(v.real) > max) {
        Error(p.init->loc, fmt::format("KC_INIT value {} does not fit output "
                                       "'{}' of type {}",
                                       s, p.name, model::DTypeName(t)));
        return std::nullopt;
      }
      return v;
    }
    if (!v.is_integer) {
      Error(p.init->loc, fmt::format("KC_INIT value {} does not fit output "
                                     "'{}' of type {}",
                                     s, p.name, model::DTypeName(t)));
      return std::nullopt;
    }
    // Range of the integer type.
    __int128 lo = 0, hi = 1;
    switch (t) {
      case model::DType::kBool:
        lo = 0;
        hi = 1;
        break;
      case model::DType::kI8:
        lo = INT8_MIN;
        hi = INT8_MAX;
        break;
      case model::DType::kI16:
        lo = INT16_MIN;
        hi = INT16_MAX;
        break;
      case model::DType::kI32:
        lo = INT32_MIN;
        hi = INT32_MAX;
        break;
      case model::DType::kI64:
        lo = INT64_MIN;
        hi = INT64_MAX;
        break;
      case model::DType::kU8:
        hi = UINT8_MAX;
        break;
      case model::DType::kU16:
        hi = UINT16_MAX;
        break;
      case model::DType::kU32:
        hi = UINT32_MAX;
        break;
      case model::DType::kU64:
        hi = UINT64_MAX;
        break;
      default:
        break;
    }
    __int128 x = v.is_unsigned_large ? static_cast<__int128>(v.unsigned_integer)
                                     : static_cast<__int128>(v.integer);
    if (x < lo || x > hi) {
      Error(p.init->loc, fmt::format("KC_INIT value {} does not fit output "
                                     "'{}' of type {}",
                                     s, p.name, model::DTypeName(t)));
      return std::nullopt;
    }
    return v;
  }

  const Kernel& k_;
  diag::DiagnosticSink& diags_;
  KernelPlan plan_;
  bool params_ok_ = true;
  std::vector<std::vector<DimSpec>> specs_;
  // Shape resolution per parameter; non-tensors stay kPending.
  enum class Resolution { kPending, kInProgress, kResolved, kFailed };
  std::vector<Resolution> state_;
  std::vector<std::pair<int, int>> pending_checks_;
};

// How a forward kernel `f` pairs with the kernel `k` that differentiates it.
// In `k` an input named like an input of `f` (or, with residual_outputs, an
// output) is that value, a parameter `d_<name>` is the derivative of float
// input or output <name> of `f` (see Link), and scalars are `f`'s scalars.
// Every float input and output of `f` is paired with its derivative, so that
// none is silently zero.
struct Pairing {
  // Parameters `d_<name>` of `k` with one role (input or output) are the
  // `noun` of float parameter <name> of `f` with role `of`.
  struct Link {
    Role of;
    const char* noun;
    // Were <name> not float: "<subject> 'd_<name>' ... would be the <noun>
    // of ..., <none>".
    const char* subject;
    const char* none;
  };
  const char* annotation;             // the annotation, "KC_VJP"
  std::optional<Text> Kernel::*text;  // its text in `f`
  const Kernel* KernelPlan::*result;  // set to `k` when the pairing holds
  const char* kind;                   // "<kind> kernel 'k'"
  bool residual_outputs;              // inputs may name outputs of `f`
  const char* plain;                  // what such an input is, "residual"
  Link input;                         // for the inputs of `k`
  Link output;                        // for the outputs of `k`
};

// KC_VJP: `k` is the backward kernel; an input `d_<out>` is the cotangent of
// output <out>, an output `d_<in>` the gradient of input <in>.
constexpr Pairing kVjp = {
    "KC_VJP",
    &Kernel::vjp,
    &KernelPlan::vjp,
    "backward",
    true,
    "residual",
    {Role::kOut, "cotangent", "parameter", "which has none"},
    {Role::kIn, "gradient", "output", "which gets no gradient"}};

// KC_JVP: `k` is the tangent kernel; an input `d_<in>` is the tangent of
// input <in>, an output `d_<out>` the tangent of output <out>.
constexpr Pairing kJvp = {
    "KC_JVP",
    &Kernel::jvp,
    &KernelPlan::jvp,
    "tangent",
    false,
    "input",
    {Role::kIn, "tangent", "parameter", "which has none"},
    {Role::kOut, "tangent", "parameter", "which has none"}};

// A dimension's extent, as far as the pairing check can tell it at build
// time: a polynomial with integer coefficients in free quantities (the
// forward kernel's shape symbols, its inputs' "_" dimensions and the integer
// scalars) and opaque atoms (what a polynomial cannot express: division,
// modulo, min, max and ceil_div over unknowns, or a dimension checked
// against an expression that reaches the dimension again).
//
// Two extents certainly differ for some call when their difference is a
// nonzero polynomial in free quantities alone, since a nonzero polynomial
// is nonzero somewhere on any product of infinite sets of integers. When
// the difference holds an atom, nothing is concluded: the trace-time checks
// of the generated wrapper see the real shapes.
class Extent {
 public:
  static Extent Const(int64_t c) {
    Extent e;
    if (c != 0) e.terms_[{}] = c;
    return e;
  }
  // A free quantity.
  static Extent Var(const std::string& name) { return Factor("v:" + name); }
  // An opaque quantity, identified by `key`.
  static Extent Atom(const std::string& key) { return Factor("a:" + key); }
  static Extent Unknown() {
    Extent e;
    e.unknown_ = true;
    return e;
  }

  bool unknown() const { return unknown_; }

  std::optional<int64_t> Constant() const {
    if (unknown_) return std::nullopt;
    if (terms_.empty()) return 0;
    if (terms_.size() == 1 && terms_.begin()->first.empty())
      return terms_.begin()->second;
    return std::nullopt;
  }

  friend Extent operator+(const Extent& a, const Extent& b) {
    return Combine(a, b, 1);
  }
  friend Extent operator-(const Extent& a, const Extent& b) {
    return Combine(a, b, -1);
  }
  friend Extent operator*(const Extent& a, const Extent& b) {
    if (a.unknown_ || b.unknown_) return Unknown();
    Extent r;
    for (const auto& [ma, ca] : a.terms_)
      for (const auto& [mb, cb] : b.terms_) {
        Monomial m = ma;
        m.insert(m.end(), mb.begin(), mb.end());
        std::sort(m.begin(), m.end());
        int64_t c = 0;
        if (__builtin_mul_overflow(ca, cb, &c) || !r.Add(m, c))
          return Unknown();
      }
    return r;
  }

  // `op` ('/', '%', 'c' for ceil_div, '<' for min, '>' for max) of two
  // extents: computed on constants, an atom otherwise.
  static Extent Apply(char op, const Extent& a, const Extent& b) {
    if (a.unknown_ || b.unknown_) return Unknown();
    std::optional<int64_t> x = a.Constant(), y = b.Constant();
    if (x && y) {
      if (op == '<') return Const(std::min(*x, *y));
      if (op == '>') return Const(std::max(*x, *y));
      if (*y == 0 || (*x == INT64_MIN && *y == -1)) return Unknown();
      int64_t q = *x / *y, m = *x % *y;
      if (m != 0 && ((m < 0) != (*y < 0))) {
        --q;
        m += *y;
      }
      if (op == '/') return Const(q);
      if (op == '%') return Const(m);
      return Const(m != 0 ? q + 1 : q);
    }
    if ((op == '/' || op == 'c') && y == 1) return a;
    return Atom(fmt::format("{}({}, {})", op, a.Key(), b.Key()));
  }

  // Canonical text: equal polynomials have equal keys.
  std::string Key() const {
    if (unknown_) return "?";
    std::vector<std::string> parts;
    for (const auto& [m, c] : terms_)
      parts.push_back(
          fmt::format("{}{}{}", c, m.empty() ? "" : "*", fmt::join(m, "*")));
    return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, " + "));
  }

  // Whether this is certainly nonzero for some values of the free
  // quantities, none of which is in `constrained`.
  bool NonzeroSomewhere(const std::set<std::string>& constrained) const {
    if (unknown_ || terms_.empty()) return false;
    for (const auto& [m, c] : terms_)
      for (const std::string& f : m)
        if (f.rfind("a:", 0) == 0 || constrained.count(f)) return false;
    return true;
  }

  // The free quantities this mentions, as Var named them.
  void VarsInto(std::set<std::string>& out) const {
    for (const auto& [m, c] : terms_)
      for (const std::string& f : m)
        if (f.rfind("v:", 0) == 0) out.insert(f);
  }

 private:
  using Monomial = std::vector<std::string>;  // sorted factors

  static Extent Factor(std::string name) {
    Extent e;
    e.terms_[{std::move(name)}] = 1;
    return e;
  }

  static Extent Combine(const Extent& a, const Extent& b, int sign) {
    if (a.unknown_ || b.unknown_) return Unknown();
    Extent r = a;
    for (const auto& [m, c] : b.terms_)
      if (!r.Add(m, sign * c)) return Unknown();
    return r;
  }

  bool Add(const Monomial& m, int64_t c) {
    int64_t& slot = terms_[m];
    if (__builtin_add_overflow(slot, c, &slot)) return false;
    if (slot == 0) terms_.erase(m);
    return true;
  }

  std::map<Monomial, int64_t> terms_;  // nonzero coefficients
  bool unknown_ = false;
};

// The extents of one kernel's tensors and expressions. A forward kernel's
// input dimensions are free quantities (a symbol's binding, a "_"), or the
// expression they are checked against. The kernel that differentiates it
// receives forward values: its input dimensions come from `input_dim`.
class ExtentModel {
 public:
  explicit ExtentModel(const KernelPlan& kp,
                       std::function<Extent(int, int)> input_dim = nullptr)
      : kp_(kp), k_(*kp.kernel), input_dim_(std::move(input_dim)) {}

  // Free quantities that a dimension checked against itself constrains
  // (with x of shape "n, k" and n = x.size, k must be 1): never concluded
  // on.
  const std::set<std::string>& constrained() const { return constrained_; }

  Extent Dim(int i, int d) {
    auto key = std::make_pair(i, d);
    if (auto it = dims_.find(key); it != dims_.end()) return it->second;
    const Param& p = k_.params[i];
    const ParamPlan& pp = kp_.params[i];
    Extent atom =
        Extent::Atom(fmt::format("{}:{}.shape[{}]", k_.name, p.name, d));
    if (d < 0 || d >= pp.rank) return atom;
    if (active_.count(key)) {
      cyclic_.insert(key);
      return atom;
    }
    Extent e = atom;
    if (IsInput(p.role) && input_dim_) {
      e = input_dim_(i, d);
    } else if (IsInput(p.role)) {
      const expr::Node* check = nullptr;
      for (const DimCheck& c : kp_.checks)
        if (c.param == i && c.dim == d) check = c.expr.get();
      bool bound = false;
      for (const Symbol& s : kp_.symbols)
        if (s.param == i && s.dim == d) {
          e = Extent::Var(fmt::format("{}:{}", k_.name, s.name));
          bound = true;
        }
      if (!bound && d < static_cast<int>(pp.any_dim.size()) && pp.any_dim[d])
        e = Extent::Var(fmt::format("{}:{}.shape[{}]", k_.name, p.name, d));
      else if (!bound && check != nullptr)
        e = Guarded(key, [&] { return Eval(*check); });
    } else if (p.role == Role::kOut &&
               d < static_cast<int>(pp.out_dims.size())) {
      e = Guarded(key, [&] { return Eval(*pp.out_dims[d]); });
    }
    if (cyclic_.count(key)) {
      e.VarsInto(constrained_);
      e = atom;
    }
    dims_.emplace(key, e);
    return e;
  }

  Extent Eval(const expr::Node& e) {
    using Kind = expr::Node::Kind;
    switch (e.kind) {
      case Kind::kInt:
        return Extent::Const(e.value);
      case Kind::kName: {
        int j = IndexOf(e.name);
        if (j >= 0) {
          const Param& p = k_.params[j];
          if (p.role == Role::kScalar && model::IsInteger(p.dtype))
            return Extent::Var("scalar:" + p.name);
          if (p.role == Role::kDerived && kp_.params[j].derived)
            return Derived(j);
          return Extent::Unknown();
        }
        for (const Symbol& s : kp_.symbols)
          if (s.name == e.name) return Dim(s.param, s.dim);
        return Extent::Unknown();
      }
      case Kind::kSize: {
        int j = IndexOf(e.name);
        if (j < 0 || kp_.params[j].rank < 0) return Extent::Unknown();
        Extent size = Extent::Const(1);
        for (int d = 0; d < kp_.params[j].rank; ++d) size = size * Dim(j, d);
        return size;
      }
      case Kind::kRank: {
        int j = IndexOf(e.name);
        if (j < 0 || kp_.params[j].rank < 0) return Extent::Unknown();
        return Extent::Const(kp_.params[j].rank);
      }
      case Kind::kShape: {
        int j = IndexOf(e.name);
        if (j < 0) return Extent::Unknown();
        return Dim(j, static_cast<int>(e.value));
      }
      case Kind::kNeg:
        return Extent::Const(0) - Eval(*e.args[0]);
      case Kind::kBinary: {
        Extent a = Eval(*e.args[0]), b = Eval(*e.args[1]);
        switch (e.op) {
          case '+':
            return a + b;
          case '-':
            return a - b;
          case '*':
            return a * b;
          default:
            return Extent::Apply(e.op, a, b);
        }
      }
      case Kind::kCall: {
        Extent a = Eval(*e.args[0]), b = Eval(*e.args[1]);
        char op = e.name == "min" ? '<' : e.name == "max" ? '>' : 'c';
        return Extent::Apply(op, a, b);
      }
    }
    return Extent::Unknown();
  }

 private:
  // A derived value whose expression reaches the value again (through a
  // dimension checked against it: "n" with n = x.size) is an atom.
  Extent Derived(int j) {
    if (auto it = derived_.find(j); it != derived_.end()) return it->second;
    Extent atom =
        Extent::Atom(fmt::format("{}:{}", k_.name, k_.params[j].name));
    if (active_derived_.count(j)) {
      cyclic_derived_.insert(j);
      return atom;
    }
    active_derived_.insert(j);
    Extent v = Eval(*kp_.params[j].derived);
    active_derived_.erase(j);
    if (cyclic_derived_.count(j)) {
      v.VarsInto(constrained_);
      v = atom;
    }
    derived_.emplace(j, v);
    return v;
  }

  template <typename F>
  Extent Guarded(std::pair<int, int> key, F f) {
    active_.insert(key);
    Extent e = f();
    active_.erase(key);
    return e;
  }

  int IndexOf(std::string_view name) const { return k_.IndexOf(name); }

  const KernelPlan& kp_;
  const Kernel& k_;
  std::function<Extent(int, int)> input_dim_;
  std::map<std::pair<int, int>, Extent> dims_;
  std::set<std::pair<int, int>> active_, cyclic_;
  std::map<int, Extent> derived_;
  std::set<int> active_derived_, cyclic_derived_;
  std::set<std::string> constrained_;
};

const char* TensorWord(Role r) { return r == Role::kOut ? "output" : "input"; }

class PairingChecker {
 public:
  // `clean`: per kernel of `plan`, whether its own analysis found no
  // error; shapes are compared only between clean kernels.
  PairingChecker(const ModulePlan& plan, const std::vector<bool>& clean,
                 KernelPlan& fp, const Pairing& pairing,
                 diag::DiagnosticSink& d)
      : plan_(plan),
        clean_(clean),
        fp_(fp),
        f_(*fp.kernel),
        pairing_(pairing),
        diags_(d),
        f_extents_(fp) {}

  void Run() {
    const Text& t = *(f_.*pairing_.text);
    const KernelPlan* kp = nullptr;
    for (const KernelPlan& p : plan_.kernels)
      if (p.kernel->name == t.text) kp = &p;
    if (kp == nullptr) {
      diags_.Error(t.loc, fmt::format("{} of kernel '{}' names '{}', which is "
                                      "not a kernel in these sources",
                                      pairing_.annotation, f_.name, t.text));
      return;
    }
    if (kp->kernel == &f_) {
      diags_.Error(t.loc,
                   fmt::format("{} of kernel '{}' names the kernel "
                               "itself; name its {} kernel",
                               pairing_.annotation, f_.name, pairing_.kind));
      return;
    }
    int errors = diags_.error_count();
    for (const Param& p : f_.params)
      if (p.role == Role::kInMut)
        diags_.Error(p.loc,
                     fmt::format("kernel '{}' has {} and in-place parameter "
                                 "'{}'; a differentiable kernel takes inputs "
                                 "and returns outputs",
                                 f_.name, pairing_.annotation, p.name));
    const Kernel& k = *kp->kernel;
    if (Clean(fp_) && Clean(*kp)) {
      // The extents of `k`'s inputs are those of the values of `f` they
      // receive.
      k_extents_.emplace(*kp, [this, &k](int i, int d) {
        int pi = PairOf(k.params[i]);
        return pi >= 0 ? f_extents_.Dim(pi, d)
                       : Extent::Atom(fmt::format("{}:{}.shape[{}]", k.name,
                                                  k.params[i].name, d));
      });
    }
    // The (role, name) of each parameter of `f` that `k` pairs.
    std::set<std::pair<Role, std::string>> paired;
    for (size_t i = 0; i < k.params.size(); ++i)
      CheckParam(k, *kp, static_cast<int>(i), paired);
    for (const Param& p : f_.params) {
      if (!model::IsFloat(p.dtype)) continue;
      if (p.role != Role::kIn && p.role != Role::kOut) continue;
      if (paired.count({p.role, p.name})) continue;
      const bool from_output = pairing_.output.of == p.role;
      const Link& link = from_output ? pairing_.output : pairing_.input;
      diags_.Error(
          t.loc,
          fmt::format("{} kernel '{}' {} no {} for float {} '{}' of "
                      "kernel '{}'; add an {} 'd_{}'",
                      pairing_.kind, k.name, from_output ? "gives" : "takes",
                      link.noun, TensorWord(p.role), p.name, f_.name,
                      from_output ? "output" : "input", p.name));
    }
    if (diags_.error_count() == errors) fp_.*pairing_.result = &k;
  }

 private:
  using Link = Pairing::Link;

  // The parameter of `f` named `name` with one of the roles, or null.
  const Param* Find(const std::string& name, std::initializer_list<Role> roles,
                    int* index) const {
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const Param& p = f_.params[i];
      if (p.name != name) continue;
      for (Role r : roles)
        if (p.role == r) {
          *index = static_cast<int>(i);
          return &p;
        }
    }
    return nullptr;
  }

  bool Clean(const KernelPlan& p) const {
    size_t i = &p - plan_.kernels.data();
    return i < clean_.size() && clean_[i];
  }

  // The index of the parameter of `f` whose value (or derivative) input `q`
  // of the pairing kernel receives, or -1.
  int PairOf(const Param& q) const {
    int pi = -1;
    if (q.role != Role::kIn) return -1;
    if (pairing_.residual_outputs ? Find(q.name, {Role::kIn, Role::kOut}, &pi)
                                  : Find(q.name, {Role::kIn}, &pi))
      return pi;
    if (q.name.rfind("d_", 0) == 0 &&
        Find(q.name.substr(2), {pairing_.input.of}, &pi))
      return pi;
    return -1;
  }

  // The first dimension in which parameter qi of `k` certainly differs from
  // parameter pi of `f` (of the same rank) for some call, or -1. An input
  // of `k` differs where it checks a dimension against an expression that
  // differs from the value it receives; an output, where its expression
  // differs from the extent of the value it stands for.
  int ShapeMismatch(const KernelPlan& kp, int qi, int pi) {
    if (!k_extents_) return -1;
    const Param& q = kp.kernel->params[qi];
    const std::set<std::string>& constrained = f_extents_.constrained();
    for (int d = 0; d < kp.params[qi].rank; ++d) {
      Extent want = f_extents_.Dim(pi, d);
      Extent got = Extent::Unknown();
      if (q.role == Role::kOut) {
        got = k_extents_->Dim(qi, d);
      } else {
        for (const DimCheck& c : kp.checks)
          if (c.param == qi && c.dim == d) got = k_extents_->Eval(*c.expr);
      }
      if ((got - want).NonzeroSomewhere(constrained)) return d;
    }
    return -1;
  }

  // Parameter qi of `k` must match parameter pi of `f` in dtype, rank and
  // shape.
  void Match(const Kernel& k, const KernelPlan& kp, int qi, int pi,
             const std::string& what) {
    const Param& q = k.params[qi];
    const Param& p = f_.params[pi];
    const int q_rank = kp.params[qi].rank;
    const int p_rank = fp_.params[pi].rank;
    if (q.dtype != p.dtype)
      diags_.Error(
          q.loc,
          fmt::format("parameter '{}' of {} kernel '{}' is {} and "
                      "must be {}, not {}",
                      q.name, pairing_.kind, k.name, what,
                      model::DTypeName(p.dtype), model::DTypeName(q.dtype)));
    else if (q_rank >= 0 && p_rank >= 0 && q_rank != p_rank)
      diags_.Error(q.loc, fmt::format("parameter '{}' of {} kernel '{}' is {} "
                                      "and must have rank {}, not {}",
                                      q.name, pairing_.kind, k.name, what,
                                      p_rank, q_rank));
    else if (int d = q_rank == p_rank ? ShapeMismatch(kp, qi, pi) : -1; d >= 0)
      diags_.Error(
          q.loc, fmt::format("parameter '{}' of {} kernel '{}' is {} and must "
                             "have its shape, but dimension {} is '{}' here "
                             "and '{}' in kernel '{}'",
                             q.name, pairing_.kind, k.name, what, d,
                             kp.params[qi].dim_texts[d],
                             fp_.params[pi].dim_texts[d], f_.name));
  }

  // `q` is `link`'s derivative of `p` (at index pi of `f`): float only.
  bool Derivative(const Kernel& k, const KernelPlan& kp, int qi, const Param& p,
                  int pi, const Link& link) {
    const Param& q = k.params[qi];
    if (!model::IsFloat(p.dtype)) {
      diags_.Error(
          q.loc, fmt::format("{} '{}' of {} kernel '{}' would be the {} of "
                             "{} {} '{}' of kernel '{}', {}",
                             link.subject, q.name, pairing_.kind, k.name,
                             link.noun, model::DTypeName(p.dtype),
                             TensorWord(link.of), p.name, f_.name, link.none));
      return false;
    }
    Match(k, kp, qi, pi,
          fmt::format("the {} of {} '{}' of kernel '{}'", link.noun,
                      TensorWord(link.of), p.name, f_.name));
    return true;
  }

  void CheckParam(const Kernel& k, const KernelPlan& kp, int qi,
                  std::set<std::pair<Role, std::string>>& paired) {
    const Param& q = k.params[qi];
    const bool d = q.name.rfind("d_", 0) == 0;
    const std::string base = d ? q.name.substr(2) : "";
    int pi = -1;
    switch (q.role) {
      case Role::kDerived:
        return;
      case Role::kInMut:
        diags_.Error(q.loc, fmt::format("{} kernel '{}' cannot have in-place "
                                        "parameter '{}'",
                                        pairing_.kind, k.name, q.name));
        return;
      case Role::kScalar: {
        const Param* p = Find(q.name, {Role::kScalar}, &pi);
        if (p == nullptr)
          diags_.Error(q.loc,
                       fmt::format("scalar '{}' of {} kernel '{}' is "
                                   "not a scalar of kernel '{}'",
                                   q.name, pairing_.kind, k.name, f_.name));
        else if (p->dtype != q.dtype)
          diags_.Error(q.loc,
                       fmt::format("scalar '{}' of {} kernel '{}' is {} in "
                                   "kernel '{}' and must have that type, not "
                                   "{}",
                                   q.name, pairing_.kind, k.name,
                                   model::DTypeName(p->dtype), f_.name,
                                   model::DTypeName(q.dtype)));
        return;
      }
      case Role::kIn: {
        const Param* p = pairing_.residual_outputs
                             ? Find(q.name, {Role::kIn, Role::kOut}, &pi)
                             : Find(q.name, {Role::kIn}, &pi);
        if (p != nullptr) {
          Match(k, kp, qi, pi,
                fmt::format("the {} '{}' of kernel '{}'", pairing_.plain,
                            q.name, f_.name));
          return;
        }
        const Link& link = pairing_.input;
        p = d ? Find(base, {link.of}, &pi) : nullptr;
        if (p == nullptr)
          diags_.Error(q.loc,
                       fmt::format("parameter '{}' of {} kernel '{}' names no "
                                   "{} of kernel '{}', nor the {} d_<{}> of "
                                   "one",
                                   q.name, pairing_.kind, k.name,
                                   pairing_.residual_outputs ? "input or output"
                                                             : "input",
                                   f_.name, link.noun, TensorWord(link.of)));
        else if (Derivative(k, kp, qi, *p, pi, link))
          paired.insert({link.of, base});
        return;
      }
      case Role::kOut: {
        const Link& link = pairing_.output;
        const Param* p = d ? Find(base, {link.of}, &pi) : nullptr;
        if (p == nullptr)
          diags_.Error(q.loc, fmt::format("output '{}' of {} kernel '{}' must "
                                          "be named d_<{}> for an {} of "
                                          "kernel '{}'",
                                          q.name, pairing_.kind, k.name,
                                          TensorWord(link.of),
                                          TensorWord(link.of), f_.name));
        else if (Derivative(k, kp, qi, *p, pi, link))
          paired.insert({link.of, base});
        return;
      }
    }
  }

  const ModulePlan& plan_;
  const std::vector<bool>& clean_;
  KernelPlan& fp_;
  const Kernel& f_;
  const Pairing& pairing_;
  diag::DiagnosticSink& diags_;
  ExtentModel f_extents_;
  std::optional<ExtentModel> k_extents_;
};

}  // namespace

Result<ModulePlan> Analyze(const model::Module& module,
                           diag::DiagnosticSink& diags) {
  int errors_before = diags.error_count();
  ModulePlan plan;
  plan.module = &module;
  std::map<std::string, const Kernel*> names;
  std::vector<bool> clean;  // per kernel: analysed without errors
  for (const Kernel& k : module.kernels) {
    auto [it, inserted] = names.emplace(k.name, &k);
    if (!inserted) {
      diags.Error(k.loc, fmt::format("kernel '{}' is defined twice", k.name));
      diags.Note(it->second->loc, "first defined here");
    }
    int before = diags.error_count();
    plan.kernels.push_back(KernelAnalyzer(k, diags).Run());
    clean.push_back(diags.error_count() == before);
  }
  for (KernelPlan& kp : plan.kernels)
    if (kp.kernel->vjp) PairingChecker(plan, clean, kp, kVjp, diags).Run();
  for (KernelPlan& kp : plan.kernels) {
    const Kernel& k = *kp.kernel;
    if (!k.jvp) continue;
    if (k.vjp)
      diags.Error(k.jvp->loc, fmt::format("kernel '{}' has both KC_VJP and "
                                          "KC_JVP; give one",
                                          k.name));
    else
      PairingChecker(plan, clean, kp, kJvp, diags).Run();
  }
  if (diags.error_count() > errors_before)
    return Error::User("the kernel model has errors");
  return plan;
}

}  // namespace kernelc::sema

#include "compiler/sema/kernel_analyzer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "compiler/sema/grid_guard.h"
#include "compiler/sema/init_value.h"
#include "compiler/sema/parallel.h"

namespace kernelc::sema {

using diag::Id;
using model::IsInput;
using model::Kernel;
using model::Param;
using model::Role;
using model::Text;

namespace {

// Why an operation that always fails does, for ExpressionAlwaysFails.
const char* FaultText(kc::arith::Fault fault) {
  switch (fault) {
    case kc::arith::Fault::kDivisionByZero:
      return "division by zero";
    case kc::arith::Fault::kShiftCount:
      return "the shift count is negative or 64 or more";
    default:
      return "the result does not fit int64";
  }
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

expr::NodePtr ShapeRef(const std::string& tensor, int dim) {
  auto n = std::make_shared<expr::Node>();
  n->kind = expr::Node::Kind::kShape;
  n->name = tensor;
  n->value = dim;
  return n;
}

// Calls `f` on every node of `e`, parents first.
template <typename F>
void ForEachNode(const expr::Node& e, const F& f) {
  f(e);
  for (const expr::NodePtr& a : e.args) ForEachNode(*a, f);
}

// `e` with each name that is one of the kernel's constants (template
// arguments, macros) replaced by its value, in place: what the name stands
// for everywhere an expression is evaluated or emitted.
expr::NodePtr WithConstants(const expr::NodePtr& e, const Kernel& k) {
  if (e == nullptr || k.constants.empty()) return e;
  if (e->kind == expr::Node::Kind::kName) {
    const model::Constant* c = k.FindConstant(e->name);
    if (c == nullptr) return e;
    auto n = std::make_shared<expr::Node>(*e);
    n->kind = expr::Node::Kind::kInt;
    n->value = c->value;
    n->name.clear();
    return n;
  }
  if (e->args.empty()) return e;
  std::vector<expr::NodePtr> args;
  bool changed = false;
  for (const expr::NodePtr& a : e->args) {
    args.push_back(WithConstants(a, k));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  auto n = std::make_shared<expr::Node>(*e);
  n->args = std::move(args);
  return n;
}

class KernelAnalyzer {
 public:
  KernelAnalyzer(const Kernel& k, diag::DiagnosticEngine& diags)
      : k_(k), diags_(diags) {
    plan_.kernel = &k;
    plan_.params.resize(k.params.size());
    plan_.block_executor =
        k.kind == model::KernelKind::kGlobal && !k.block_features.empty();
  }

  KernelPlan Run() {
    CheckParams();
    CheckResults();
    AnalyzeBatching();
    if (!params_ok_) return std::move(plan_);
    ResolveShapes();
    AnalyzeLeading();
    BindSymbols();
    AnalyzeDerived();
    AnalyzeChecks();
    AnalyzeOutputs();
    AnalyzeGrid();
    AnalyzeSharedBytes();
    AnalyzeInits();
    AnalyzeParallel();
    AnalyzeElementwise();
    plan_.guard_elided = GuardBoundsGrid(k_, plan_);
    return std::move(plan_);
  }

 private:
  template <diag::Id kId, typename... Args>
  void Error(const diag::SourceLoc& loc, const Args&... args) {
    diags_.Report<kId>(loc, args...);
  }

  int IndexOf(std::string_view name) const { return k_.IndexOf(name); }

  // An op returns its kernel's results: a kernel without one (no KC_OUT, no
  // KC_INMUT) has nothing for the call to return and its batch to follow.
  void CheckResults() {
    if (std::none_of(k_.params.begin(), k_.params.end(),
                     [](const Param& p) { return model::IsResult(p.role); }))
      Error<Id::kKernelWithoutResult>(k_.loc, k_.name);
  }

  void CheckParams() {
    if (!IsIdentifier(k_.Op()))
      Error<Id::kKernelNameNotIdentifier>(k_.loc, k_.Op());
    std::map<std::string, int> seen;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!IsIdentifier(p.name)) {
        Error<Id::kParamNameNotIdentifier>(p.loc, p.name, k_.name);
        params_ok_ = false;
        continue;
      }
      if (!seen.emplace(p.name, static_cast<int>(i)).second) {
        Error<Id::kParamDeclaredTwice>(p.loc, p.name, k_.name);
        params_ok_ = false;
      }
      if (p.role == Role::kScalar &&
          (p.dtype == model::DType::kF16 || p.dtype == model::DType::kBF16)) {
        Error<Id::kModelHalfScalar>(p.loc, p.name, model::DTypeName(p.dtype));
      }
      if (p.role == Role::kDerived) {
        if (!model::IsInteger(p.dtype))
          Error<Id::kModelDerivedNotInteger>(p.loc, p.name,
                                             model::DTypeName(p.dtype));
        if (!p.derived) {
          Error<Id::kDerivedWithoutExpression>(p.loc, p.name);
          params_ok_ = false;
        }
      }
      if (p.init && p.role != Role::kOut)
        Error<Id::kModelInitOnNonOutput>(p.init->loc, p.name);
      if (p.traced && p.role != Role::kScalar) {
        Error<Id::kModelTracedNotScalar>(p.loc, p.name, k_.name);
        params_ok_ = false;
      }
      if (p.optional && p.role != Role::kIn) {
        Error<Id::kModelOptionalNotInput>(p.loc, p.name, k_.name);
        params_ok_ = false;
      }
      if (model::IsTensor(p.role) && p.access == model::Access::kView &&
          p.rank < 0) {
        Error<Id::kViewNeedsRank>(p.loc, p.name, k_.name);
        params_ok_ = false;
        continue;
      }
      if (model::IsTensor(p.role) && !p.shape &&
          (p.access == model::Access::kPointer || p.role == Role::kOut)) {
        Error<Id::kTensorNeedsShape>(p.loc, p.name, k_.name);
        params_ok_ = false;
      }
    }
    if (k_.kind == model::KernelKind::kGlobal) {
      if (k_.grid.empty() || k_.grid.size() > 3)
        Error<Id::kGridSize>(k_.loc, k_.name, k_.grid.size());
      if (!k_.block.empty()) {
        // Each factor is capped first, so the product cannot overflow.
        int64_t threads = 1;
        bool positive = true;
        for (int64_t b : k_.block) {
          positive = positive && b >= 1;
          threads *= std::min<int64_t>(b >= 1 ? b : 1, 1025);
        }
        if (k_.block.size() != k_.grid.size())
          Error<Id::kGridBlockRank>(k_.loc, k_.name, k_.grid.size(),
                                    k_.block.size());
        else if (!positive || threads > 1024)
          Error<Id::kBlockLimits>(k_.loc, k_.name);
      }
      plan_.block = k_.block.empty()
                        ? model::DefaultBlock(static_cast<int>(k_.grid.size()))
                        : k_.block;
      plan_.block.resize(std::min<size_t>(plan_.block.size(), 3));
    } else if (!k_.grid.empty() || !k_.block.empty()) {
      Error<Id::kHostKernelGrid>(k_.loc, k_.name);
    }
  }

  // Parses every tensor's shape and resolves "same shape as tensor t"
  // references, so each tensor has a rank and one DimSpec per dimension.
  void ResolveShapes() {
    shapes_.dims.resize(k_.params.size());
    state_.assign(k_.params.size(), Resolution::kPending);
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (model::IsTensor(k_.params[i].role)) Resolve(static_cast<int>(i));
    for (Resolution r : state_)
      shapes_.resolved.push_back(r == Resolution::kResolved);
  }

  bool Resolved(size_t i) const { return shapes_.Resolved(i); }

  bool Resolve(int i) {
    if (state_[i] == Resolution::kResolved) return true;
    if (state_[i] == Resolution::kFailed) return false;
    const Param& p = k_.params[i];
    if (state_[i] == Resolution::kInProgress) {
      Error<Id::kShapeCycle>(p.shape->loc, p.name);
      return false;
    }
    state_[i] = Resolution::kInProgress;
    bool ok = ResolveOne(i);
    state_[i] = ok ? Resolution::kResolved : Resolution::kFailed;
    if (ok) plan_.params[i].rank = static_cast<int>(shapes_.dims[i].size());
    return ok;
  }

  bool ResolveOne(int i) {
    const Param& p = k_.params[i];
    std::vector<DimSpec>& out = shapes_.dims[i];
    std::vector<std::string>& symbols = plan_.params[i].dim_symbols;
    if (!p.shape) {  // an input view without KC_SHAPE: any extents
      out.assign(p.rank, DimSpec{true, nullptr, "_", p.loc, p.loc});
      symbols.assign(p.rank, "");
      plan_.params[i].dim_texts.assign(p.rank, "_");
      return true;
    }
    auto parsed = expr::ParseShape(p.shape->text);
    if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
      Error<Id::kShapeSyntax>(p.shape->loc.Shifted(err->offset), p.name,
                              err->message);
      return false;
    }
    std::vector<expr::Dim>& dims = std::get<std::vector<expr::Dim>>(parsed);
    for (expr::Dim& d : dims) d.expr = WithConstants(d.expr, k_);
    // "..." leading the shape: the kernel's leading dimensions, whatever
    // their number; the dimensions after it count from the last.
    if (!dims.empty() && dims[0].leading) {
      if (p.access == model::Access::kView) {
        Error<Id::kEllipsisOnView>(p.shape->loc, p.name, k_.name);
        return false;
      }
      plan_.params[i].leading = true;
      dims.erase(dims.begin());
    }
    // A shape that is the bare name of another tensor: the same shape.
    if (dims.size() == 1 && !dims[0].any && !plan_.params[i].leading &&
        dims[0].expr->kind == expr::Node::Kind::kName) {
      int ref = IndexOf(dims[0].expr->name);
      if (ref >= 0 && model::IsTensor(k_.params[ref].role)) {
        if (ref == i) {
          Error<Id::kShapeRefersToItself>(p.shape->loc, p.name);
          return false;
        }
        if (!Resolve(ref)) return false;
        const Param& r = k_.params[ref];
        int rank = static_cast<int>(shapes_.dims[ref].size());
        symbols = plan_.params[ref].dim_symbols;
        plan_.params[i].dim_texts = plan_.params[ref].dim_texts;
        const bool leading = plan_.params[ref].leading;
        if (leading && p.access == model::Access::kView) {
          Error<Id::kEllipsisOnView>(p.shape->loc, p.name, k_.name);
          return false;
        }
        plan_.params[i].leading = leading;
        for (int d = 0; d < rank; ++d) {
          // Outputs have no array at trace time: take the dimension
          // expressions of an output; an input's dimensions are read off it
          // (after "...", counted from the last).
          const int at = leading ? d - rank : d;
          if (r.role == Role::kOut && !shapes_.dims[ref][d].any) {
            out.push_back(shapes_.dims[ref][d]);
          } else {
            out.push_back(DimSpec{false, ShapeRef(r.name, at),
                                  fmt::format("{}.shape[{}]", r.name, at),
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
      Error<Id::kShapeRankMismatch>(p.shape->loc, p.name, rank,
                                    rank == 1 ? "" : "s", p.rank);
      return false;
    }
    return true;
  }

  bool IsParamName(std::string_view n) const { return IndexOf(n) >= 0; }

  // The index in the buffer of dimension `d` of tensor `i`'s shape as
  // written: after "...", counted from the last (-1).
  int DimIndex(size_t i, size_t d) const {
    const int rank = static_cast<int>(shapes_.dims[i].size());
    return plan_.params[i].leading ? static_cast<int>(d) - rank
                                   : static_cast<int>(d);
  }
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
      for (size_t d = 0; d < shapes_.dims[i].size(); ++d) {
        const DimSpec& s = shapes_.dims[i][d];
        pp.any_dim.push_back(s.any);
        if (s.any) continue;
        // An input that may be None binds nothing: it is checked.
        if (s.expr->kind == expr::Node::Kind::kName && !p.optional &&
            !IsParamName(s.expr->name) && !bound.count(s.expr->name)) {
          bound.insert(s.expr->name);
          plan_.symbols.push_back(
              {s.expr->name, static_cast<int>(i), DimIndex(i, d)});
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
      return i >= 0 && !plan_.params[i].leading ? plan_.params[i].rank : -1;
    };
    if (auto err = expr::Check(e, scope)) {
      if (err->message.rfind("unknown name", 0) == 0)
        Error<Id::kExpressionUnknownName>(loc.Shifted(err->offset), what,
                                          err->message);
      else
        Error<Id::kExpressionInvalid>(loc.Shifted(err->offset), what,
                                      err->message);
      return false;
    }
    std::optional<std::pair<std::string, int64_t>> from_first;
    ForEachNode(*e, [&](const expr::Node& n) {
      int i = IndexOf(n.name);
      if (!from_first && n.kind == expr::Node::Kind::kShape && n.value >= 0 &&
          i >= 0 && plan_.params[i].leading)
        from_first = {n.name, n.value};
    });
    if (from_first) {
      Error<Id::kEllipsisShapeIndex>(
          loc.Shifted(std::max(0, expr::FirstUse(e, from_first->first))), what,
          from_first->first, from_first->second, from_first->first);
      return false;
    }
    for (const std::string& n : expr::NamesUsed(e)) {
      int i = IndexOf(n);
      if (i >= 0 && k_.params[i].traced) {
        Error<Id::kExpressionUsesTraced>(
            loc.Shifted(std::max(0, expr::FirstUse(e, n))), what, n);
        return false;
      }
    }
    // The generated code would fail at every call: a build-time error.
    if (std::optional<expr::ConstantFault> f = expr::FindConstantFault(e)) {
      Error<Id::kExpressionAlwaysFails>(loc.Shifted(f->begin), what, f->text,
                                        FaultText(f->fault));
      return false;
    }
    if (inputs_only) {
      for (const std::string& n : expr::NamesUsed(e)) {
        int i = IndexOf(n);
        if (i >= 0 && k_.params[i].role == Role::kOut) {
          Error<Id::kExpressionUsesOutput>(
              loc.Shifted(std::max(0, expr::FirstUse(e, n))), what, n);
          return false;
        }
      }
    }
    return true;
  }

  void AnalyzeDerived() {
    std::vector<int> derived;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.role != Role::kDerived) continue;
      auto parsed = expr::Parse(p.derived->text);
      if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
        Error<Id::kDerivedSyntax>(p.derived->loc.Shifted(err->offset), p.name,
                                  err->message);
        continue;
      }
      expr::NodePtr e = WithConstants(std::get<expr::NodePtr>(parsed), k_);
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
        Error<Id::kDerivedCycle>(k_.params[i].derived->loc, k_.params[i].name);
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
      const DimSpec& s = shapes_.dims[i][d];
      if (k_.params[i].optional && s.expr->kind == expr::Node::Kind::kName &&
          plan_.KindOf(s.expr->name) == expr::NameKind::kUnknown) {
        Error<Id::kOptionalBindsSymbol>(s.loc, s.expr->name, k_.params[i].name);
        continue;
      }
      std::string what = fmt::format("in the shape of '{}'", k_.params[i].name);
      if (!CheckExpr(s.expr, s.text_loc, what, /*inputs_only=*/true)) continue;
      plan_.checks.push_back({i, DimIndex(i, d), s.expr, s.text});
    }
  }

  void AnalyzeOutputs() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.role != Role::kOut || !Resolved(i)) continue;
      ParamPlan& pp = plan_.params[i];
      for (const DimSpec& s : shapes_.dims[i]) {
        if (s.any) {
          Error<Id::kOutputShapeAny>(s.loc, p.name);
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
        Error<Id::kGridSyntax>(t.loc.Shifted(err->offset), k_.name,
                               err->message);
        continue;
      }
      expr::NodePtr e = WithConstants(std::get<expr::NodePtr>(parsed), k_);
      if (!CheckExpr(e, t.loc, fmt::format("in the grid of '{}'", k_.name),
                     /*inputs_only=*/false))
        continue;
      // KC_BLOCKS counts blocks: the threads are those times the block.
      if (k_.grid_in_blocks && g < plan_.block.size()) {
        auto block = std::make_shared<expr::Node>();
        block->kind = expr::Node::Kind::kInt;
        block->value = plan_.block[g];
        auto threads = std::make_shared<expr::Node>();
        threads->kind = expr::Node::Kind::kBinary;
        threads->op = expr::Op::kMul;
        threads->begin = e->begin;
        threads->end = e->end;
        threads->args = {e, block};
        e = threads;
      }
      plan_.grid.push_back(e);
    }
  }

  void AnalyzeSharedBytes() {
    if (!k_.shared_bytes) return;
    const Text& t = *k_.shared_bytes;
    std::string what = fmt::format("in KC_SHARED_BYTES of '{}'", k_.name);
    auto parsed = expr::Parse(t.text);
    if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
      Error<Id::kSharedBytesSyntax>(t.loc.Shifted(err->offset), k_.name,
                                    err->message);
      return;
    }
    expr::NodePtr e = WithConstants(std::get<expr::NodePtr>(parsed), k_);
    if (CheckExpr(e, t.loc, what, /*inputs_only=*/false))
      plan_.shared_bytes = e;
  }

  void AnalyzeInits() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!p.init || p.role != Role::kOut) continue;
      if (auto v = ParseInit(p, diags_)) plan_.params[i].init = *v;
    }
  }

  // "...": the input that gives the leading dimensions, and what needs
  // every dimension known.
  void AnalyzeLeading() {
    const Param* output = nullptr;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      if (!plan_.params[i].leading) continue;
      const Param& p = k_.params[i];
      if (IsInput(p.role) && plan_.leading < 0)
        plan_.leading = static_cast<int>(i);
      if (p.role == Role::kOut && output == nullptr) output = &p;
      if (!k_.parallel.empty()) {
        Error<Id::kEllipsisParallel>(k_.parallel.front().loc, k_.name, p.name);
        break;
      }
    }
    if (output != nullptr && plan_.leading < 0)
      Error<Id::kEllipsisOutputWithoutInput>(output->loc, output->name,
                                             k_.name);
    // The leading dimensions of a batch element are the call's: a batch
    // runs element by element.
    if (plan_.leading >= 0 && plan_.fold_elementwise) {
      plan_.fold_elementwise = false;
      AnalyzeBatching();
    }
  }

  // See KernelPlan::batching.
  void AnalyzeBatching() {
    bool inmut = std::any_of(k_.params.begin(), k_.params.end(),
                             [](const Param& p) {
                               return p.role == Role::kInMut;
                             });
    plan_.fold_elementwise = k_.FoldsElementwise() && plan_.leading < 0;
    plan_.batching = inmut || plan_.fold_elementwise
                         ? KernelPlan::Batching::kBroadcastAll
                         : KernelPlan::Batching::kExpandDims;
  }

  void AnalyzeParallel() { sema::AnalyzeParallel(k_, shapes_, plan_, diags_); }

  // KC_ELEMENTWISE: every tensor has the first tensor's shape, of rank 1 or
  // more and with no "_" dimension, so that a batch folds into dimension 0.
  void AnalyzeElementwise() {
    if (!k_.elementwise) return;
    const Param* first = nullptr;
    std::vector<std::string> shape;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (!model::IsTensor(p.role) || !Resolved(i)) continue;
      if (p.optional) {
        Error<Id::kOptionalElementwise>(p.loc, k_.name, p.name);
        return;
      }
      std::vector<std::string> dims = plan_.params[i].dim_texts;
      const bool leading = plan_.params[i].leading;
      if (leading) dims.insert(dims.begin(), "...");
      std::string text = fmt::format("({})", fmt::join(dims, ", "));
      if (dims.empty() ||
          std::find(dims.begin(), dims.end(), "_") != dims.end()) {
        Error<Id::kElementwiseExtents>(p.loc, k_.name, p.name, text);
        return;
      }
      if (!first) {
        first = &p;
        shape = dims;
      } else if (dims != shape) {
        Error<Id::kElementwiseShapes>(p.loc, k_.name, p.name, text, first->name,
                                      fmt::join(shape, ", "));
        return;
      }
    }
  }

  const Kernel& k_;
  diag::DiagnosticEngine& diags_;
  KernelPlan plan_;
  bool params_ok_ = true;
  Shapes shapes_;
  // Shape resolution per parameter; non-tensors stay kPending.
  enum class Resolution { kPending, kInProgress, kResolved, kFailed };
  std::vector<Resolution> state_;
  std::vector<std::pair<int, int>> pending_checks_;
};

}  // namespace

KernelPlan AnalyzeKernel(const Kernel& k, diag::DiagnosticEngine& diags) {
  return KernelAnalyzer(k, diags).Run();
}

}  // namespace kernelc::sema

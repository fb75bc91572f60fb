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

  int IndexOf(std::string_view name) const {
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (k_.params[i].name == name) return static_cast<int>(i);
    return -1;
  }

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

  // KC_PARALLEL: each name a shape symbol that input shapes bind, and used
  // in tensor shapes only as a whole dimension, so that a shard of that
  // dimension is a shard of every tensor that has it.
  void AnalyzeParallel() {
    std::set<std::string> seen;
    for (const Text& t : k_.parallel) {
      if (!seen.insert(t.text).second) {
        Error(t.loc, fmt::format("KC_PARALLEL of kernel '{}' names '{}' twice",
                                 k_.name, t.text));
        continue;
      }
      // A shape symbol, or a derived value, that is a whole dimension of
      // an input.
      bool bound = false;
      for (size_t i = 0; i < k_.params.size(); ++i)
        if (IsInput(k_.params[i].role) && Resolved(i))
          for (const std::string& s : plan_.params[i].dim_symbols)
            bound |= s == t.text;
      if (!bound) {
        Error(t.loc,
              fmt::format("KC_PARALLEL of kernel '{}' names '{}', which is "
                          "not a dimension of an input: name a shape symbol "
                          "or derived value that an input shape uses",
                          k_.name, t.text));
        continue;
      }
      bool whole = true;
      for (size_t i = 0; i < k_.params.size() && whole; ++i) {
        if (!Resolved(i)) continue;
        for (const DimSpec& d : specs_[i]) {
          if (d.any || d.expr->kind == expr::Node::Kind::kName) continue;
          std::vector<std::string> used = expr::NamesUsed(d.expr);
          if (std::find(used.begin(), used.end(), t.text) == used.end())
            continue;
          Error(t.loc,
                fmt::format("KC_PARALLEL of kernel '{}' names '{}', but the "
                            "shape of '{}' uses it in '{}'; a parallel "
                            "symbol must be a whole dimension",
                            k_.name, t.text, k_.params[i].name, d.text));
          whole = false;
          break;
        }
      }
      if (whole) plan_.parallel.push_back(t.text);
    }
  }

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

const char* TensorWord(Role r) { return r == Role::kOut ? "output" : "input"; }

class PairingChecker {
 public:
  PairingChecker(const ModulePlan& plan, KernelPlan& fp, const Pairing& pairing,
                 diag::DiagnosticSink& d)
      : plan_(plan), fp_(fp), f_(*fp.kernel), pairing_(pairing), diags_(d) {}

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

  // `q` (of kernel `k`) must match `p` of `f` in dtype and rank.
  void Match(const Kernel& k, const Param& q, int q_rank, const Param& p,
             int p_rank, const std::string& what) {
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
  }

  // `q` is `link`'s derivative of `p` (at index pi of `f`): float only.
  bool Derivative(const Kernel& k, const Param& q, int q_rank, const Param& p,
                  int pi, const Link& link) {
    if (!model::IsFloat(p.dtype)) {
      diags_.Error(
          q.loc, fmt::format("{} '{}' of {} kernel '{}' would be the {} of "
                             "{} {} '{}' of kernel '{}', {}",
                             link.subject, q.name, pairing_.kind, k.name,
                             link.noun, model::DTypeName(p.dtype),
                             TensorWord(link.of), p.name, f_.name, link.none));
      return false;
    }
    Match(k, q, q_rank, p, fp_.params[pi].rank,
          fmt::format("the {} of {} '{}' of kernel '{}'", link.noun,
                      TensorWord(link.of), p.name, f_.name));
    return true;
  }

  void CheckParam(const Kernel& k, const KernelPlan& kp, int qi,
                  std::set<std::pair<Role, std::string>>& paired) {
    const Param& q = k.params[qi];
    const int q_rank = kp.params[qi].rank;
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
          Match(k, q, q_rank, *p, fp_.params[pi].rank,
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
        else if (Derivative(k, q, q_rank, *p, pi, link))
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
        else if (Derivative(k, q, q_rank, *p, pi, link))
          paired.insert({link.of, base});
        return;
      }
    }
  }

  const ModulePlan& plan_;
  KernelPlan& fp_;
  const Kernel& f_;
  const Pairing& pairing_;
  diag::DiagnosticSink& diags_;
};

}  // namespace

Result<ModulePlan> Analyze(const model::Module& module,
                           diag::DiagnosticSink& diags) {
  int errors_before = diags.error_count();
  ModulePlan plan;
  plan.module = &module;
  std::map<std::string, const Kernel*> names;
  for (const Kernel& k : module.kernels) {
    auto [it, inserted] = names.emplace(k.name, &k);
    if (!inserted) {
      diags.Error(k.loc, fmt::format("kernel '{}' is defined twice", k.name));
      diags.Note(it->second->loc, "first defined here");
    }
    plan.kernels.push_back(KernelAnalyzer(k, diags).Run());
  }
  for (KernelPlan& kp : plan.kernels)
    if (kp.kernel->vjp) PairingChecker(plan, kp, kVjp, diags).Run();
  for (KernelPlan& kp : plan.kernels) {
    const Kernel& k = *kp.kernel;
    if (!k.jvp) continue;
    if (k.vjp)
      diags.Error(k.jvp->loc, fmt::format("kernel '{}' has both KC_VJP and "
                                          "KC_JVP; give one",
                                          k.name));
    else
      PairingChecker(plan, kp, kJvp, diags).Run();
  }
  if (diags.error_count() > errors_before)
    return Error::User("the kernel model has errors");
  return plan;
}

}  // namespace kernelc::sema

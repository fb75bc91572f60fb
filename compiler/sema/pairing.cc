#include "compiler/sema/pairing.h"

#include <fmt/format.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "compiler/sema/extent.h"

namespace kernelc::sema {

using diag::Id;
using model::Kernel;
using model::Param;
using model::Role;
using model::Text;

namespace {

// How a forward kernel `f` pairs with the kernel `k` that differentiates it.
// In `k` an input named like an input of `f` (or, with residual_outputs, an
// output) is that value, a parameter `d_<name>` is the derivative of float
// input or output <name> of `f` (see Link), and scalars are `f`'s scalars.
// Every float input and output of `f` is paired with its derivative, so that
// none is silently zero.
struct PairingRules {
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
  Pairing::Mode mode;                 // recorded with the pairing
  const char* kind;                   // "<kind> kernel 'k'"
  bool residual_outputs;              // inputs may name outputs of `f`
  const char* plain;                  // what such an input is, "residual"
  Link input;                         // for the inputs of `k`
  Link output;                        // for the outputs of `k`
};

// KC_VJP: `k` is the backward kernel; an input `d_<out>` is the cotangent of
// output <out>, an output `d_<in>` the gradient of input <in>.
constexpr PairingRules kVjp = {
    "KC_VJP",
    &Kernel::vjp,
    Pairing::Mode::kVjp,
    "backward",
    true,
    "residual",
    {Role::kOut, "cotangent", "parameter", "which has none"},
    {Role::kIn, "gradient", "output", "which gets no gradient"}};

// KC_JVP: `k` is the tangent kernel; an input `d_<in>` is the tangent of
// input <in>, an output `d_<out>` the tangent of output <out>.
constexpr PairingRules kJvp = {
    "KC_JVP",
    &Kernel::jvp,
    Pairing::Mode::kJvp,
    "tangent",
    false,
    "input",
    {Role::kIn, "tangent", "parameter", "which has none"},
    {Role::kOut, "tangent", "parameter", "which has none"}};

const char* TensorWord(Role r) { return r == Role::kOut ? "output" : "input"; }

class PairingChecker {
 public:
  // `clean`: per kernel of `plan`, whether its own analysis found no
  // error; shapes are compared only between clean kernels.
  PairingChecker(const ModulePlan& plan, const std::vector<bool>& clean,
                 KernelPlan& fp, const PairingRules& pairing,
                 diag::DiagnosticEngine& d)
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
      diags_.Report<Id::kPairingNamesNoKernel>(t.loc, pairing_.annotation,
                                               f_.name, t.text);
      return;
    }
    if (kp->kernel == &f_) {
      diags_.Report<Id::kPairingNamesItself>(t.loc, pairing_.annotation,
                                             f_.name, pairing_.kind);
      return;
    }
    int errors = diags_.error_count();
    for (const Param& p : f_.params)
      if (p.role == Role::kInMut)
        diags_.Report<Id::kDifferentiableInMut>(p.loc, f_.name,
                                                pairing_.annotation, p.name);
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
    std::vector<PairedParam> params;
    for (size_t i = 0; i < k.params.size(); ++i)
      params.push_back(CheckParam(k, *kp, static_cast<int>(i), paired));
    for (const Param& p : f_.params) {
      if (!model::IsFloat(p.dtype)) continue;
      if (p.role != Role::kIn && p.role != Role::kOut) continue;
      if (paired.count({p.role, p.name})) continue;
      const bool from_output = pairing_.output.of == p.role;
      const Link& link = from_output ? pairing_.output : pairing_.input;
      diags_.Report<Id::kPairingMissingDerivative>(
          t.loc, pairing_.kind, k.name, from_output ? "gives" : "takes",
          link.noun, TensorWord(p.role), p.name, f_.name,
          from_output ? "output" : "input", p.name);
    }
    if (diags_.error_count() != errors) return;
    // KC_JVP beside KC_VJP adds forward mode; alone, it is the pairing.
    std::optional<Pairing>& slot =
        pairing_.mode == Pairing::Mode::kJvp && f_.vjp ? fp_.tangent
                                                        : fp_.pairing;
    slot = Pairing{pairing_.mode, &k, std::move(params)};
  }

 private:
  using Link = PairingRules::Link;

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

  // What parameter `q` of the pairing kernel names in `f` by the naming
  // rules alone (types and shapes aside), or nullopt when it names nothing
  // there.
  std::optional<PairedParam> Classify(const Param& q) const {
    using Kind = PairedParam::Kind;
    const bool d = q.name.rfind("d_", 0) == 0;
    int pi = -1;
    switch (q.role) {
      case Role::kDerived:
        return PairedParam{};
      case Role::kScalar:
        if (Find(q.name, {Role::kScalar}, &pi))
          return PairedParam{Kind::kStatic, pi};
        break;
      case Role::kIn:
        if (pairing_.residual_outputs
                ? Find(q.name, {Role::kIn, Role::kOut}, &pi)
                : Find(q.name, {Role::kIn}, &pi))
          return PairedParam{Kind::kValue, pi};
        if (d && Find(q.name.substr(2), {pairing_.input.of}, &pi))
          return PairedParam{Kind::kDerivative, pi};
        break;
      case Role::kOut:
        if (d && Find(q.name.substr(2), {pairing_.output.of}, &pi))
          return PairedParam{Kind::kDerivative, pi};
        break;
      case Role::kInMut:
        break;
    }
    return std::nullopt;
  }

  // The index of the parameter of `f` whose value (or derivative) input `q`
  // of the pairing kernel receives, or -1.
  int PairOf(const Param& q) const {
    if (q.role != Role::kIn) return -1;
    const std::optional<PairedParam> named = Classify(q);
    return named ? named->of : -1;
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
      if (Extent::Apply(expr::Op::kSub, got, want)
              .NonzeroSomewhere(constrained))
        return d;
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
      diags_.Report<Id::kPairedDtype>(q.loc, q.name, pairing_.kind, k.name,
                                      what, model::DTypeName(p.dtype),
                                      model::DTypeName(q.dtype));
    else if (q_rank >= 0 && p_rank >= 0 && q_rank != p_rank)
      diags_.Report<Id::kPairedRank>(q.loc, q.name, pairing_.kind, k.name, what,
                                     p_rank, q_rank);
    else if (int d = q_rank == p_rank ? ShapeMismatch(kp, qi, pi) : -1; d >= 0)
      diags_.Report<Id::kPairedShape>(q.loc, q.name, pairing_.kind, k.name,
                                      what, d, kp.params[qi].dim_texts[d],
                                      fp_.params[pi].dim_texts[d], f_.name);
  }

  // `q` is `link`'s derivative of `p` (at index pi of `f`): float only.
  bool Derivative(const Kernel& k, const KernelPlan& kp, int qi, const Param& p,
                  int pi, const Link& link) {
    const Param& q = k.params[qi];
    if (!model::IsFloat(p.dtype)) {
      diags_.Report<Id::kPairedNonFloat>(
          q.loc, link.subject, q.name, pairing_.kind, k.name, link.noun,
          model::DTypeName(p.dtype), TensorWord(link.of), p.name, f_.name,
          link.none);
      return false;
    }
    Match(k, kp, qi, pi,
          fmt::format("the {} of {} '{}' of kernel '{}'", link.noun,
                      TensorWord(link.of), p.name, f_.name));
    return true;
  }

  // Checks parameter qi of `k` against what it names in `f`; returns that,
  // for the record.
  PairedParam CheckParam(const Kernel& k, const KernelPlan& kp, int qi,
                         std::set<std::pair<Role, std::string>>& paired) {
    const Param& q = k.params[qi];
    const std::optional<PairedParam> named = Classify(q);
    const Param* p = named && named->of >= 0 ? &f_.params[named->of] : nullptr;
    switch (q.role) {
      case Role::kDerived:
        break;
      case Role::kInMut:
        diags_.Report<Id::kPairedKernelInMut>(q.loc, pairing_.kind, k.name,
                                              q.name);
        break;
      case Role::kScalar:
        if (p == nullptr)
          diags_.Report<Id::kPairedScalarUnknown>(q.loc, q.name, pairing_.kind,
                                                  k.name, f_.name);
        else if (p->dtype != q.dtype)
          diags_.Report<Id::kPairedScalarType>(
              q.loc, q.name, pairing_.kind, k.name, model::DTypeName(p->dtype),
              f_.name, model::DTypeName(q.dtype));
        break;
      case Role::kIn:
        if (p != nullptr && named->kind == PairedParam::Kind::kValue) {
          Match(k, kp, qi, named->of,
                fmt::format("the {} '{}' of kernel '{}'", pairing_.plain,
                            q.name, f_.name));
        } else if (p == nullptr) {
          diags_.Report<Id::kPairedParamUnknown>(
              q.loc, q.name, pairing_.kind, k.name,
              pairing_.residual_outputs ? "input or output" : "input", f_.name,
              pairing_.input.noun, TensorWord(pairing_.input.of));
        } else if (Derivative(k, kp, qi, *p, named->of, pairing_.input)) {
          paired.insert({pairing_.input.of, p->name});
        }
        break;
      case Role::kOut:
        if (p == nullptr)
          diags_.Report<Id::kPairedOutputName>(
              q.loc, q.name, pairing_.kind, k.name,
              TensorWord(pairing_.output.of), TensorWord(pairing_.output.of),
              f_.name);
        else if (Derivative(k, kp, qi, *p, named->of, pairing_.output))
          paired.insert({pairing_.output.of, p->name});
        break;
    }
    return named.value_or(PairedParam{});
  }

  const ModulePlan& plan_;
  const std::vector<bool>& clean_;
  KernelPlan& fp_;
  const Kernel& f_;
  const PairingRules& pairing_;
  diag::DiagnosticEngine& diags_;
  ExtentModel f_extents_;
  std::optional<ExtentModel> k_extents_;
};

}  // namespace

void AnalyzePairings(ModulePlan& plan, const std::vector<bool>& clean,
                     diag::DiagnosticEngine& diags) {
  for (KernelPlan& kp : plan.kernels)
    if (kp.kernel->vjp) PairingChecker(plan, clean, kp, kVjp, diags).Run();
  for (KernelPlan& kp : plan.kernels)
    if (kp.kernel->jvp) PairingChecker(plan, clean, kp, kJvp, diags).Run();
}

}  // namespace kernelc::sema

#include "compiler/frontend/grid_guard.h"

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

enum class Builtin { kNone, kThreadIdx, kBlockIdx, kBlockDim };

// The built-in whose `.x` `e` reads. kernelc/host.h defines threadIdx as
// `::kc::host::Load(::kc::host::grid_state.thread)`; Clang's CUDA mode
// declares variables of the types __cuda_builtin_threadIdx_t and so on,
// whose `x` is a property.
Builtin XOf(const clang::Expr* e) {
  e = e->IgnoreParenImpCasts();
  if (const auto* p = llvm::dyn_cast<clang::PseudoObjectExpr>(e))
    e = p->getSyntacticForm()->IgnoreParens();
  if (const auto* m = llvm::dyn_cast<clang::MSPropertyRefExpr>(e)) {
    if (m->getPropertyDecl()->getName() != "x") return Builtin::kNone;
    const clang::CXXRecordDecl* r =
        m->getBaseExpr()->getType()->getAsCXXRecordDecl();
    if (r == nullptr) return Builtin::kNone;
    llvm::StringRef name = r->getName();
    if (name == "__cuda_builtin_threadIdx_t") return Builtin::kThreadIdx;
    if (name == "__cuda_builtin_blockIdx_t") return Builtin::kBlockIdx;
    if (name == "__cuda_builtin_blockDim_t") return Builtin::kBlockDim;
    return Builtin::kNone;
  }
  const auto* m = llvm::dyn_cast<clang::MemberExpr>(e);
  if (m == nullptr || m->getMemberDecl()->getName() != "x")
    return Builtin::kNone;
  const auto* call = llvm::dyn_cast<clang::CallExpr>(
      m->getBase()->IgnoreImplicit()->IgnoreParens());
  if (call == nullptr || call->getNumArgs() != 1) return Builtin::kNone;
  const clang::FunctionDecl* f = call->getDirectCallee();
  if (f == nullptr || f->getQualifiedNameAsString() != "kc::host::Load")
    return Builtin::kNone;
  const auto* field =
      llvm::dyn_cast<clang::MemberExpr>(call->getArg(0)->IgnoreImplicit());
  if (field == nullptr) return Builtin::kNone;
  const auto* state = llvm::dyn_cast<clang::DeclRefExpr>(
      field->getBase()->IgnoreParenImpCasts());
  if (state == nullptr ||
      state->getDecl()->getQualifiedNameAsString() != "kc::host::grid_state")
    return Builtin::kNone;
  llvm::StringRef name = field->getMemberDecl()->getName();
  if (name == "thread") return Builtin::kThreadIdx;
  if (name == "block") return Builtin::kBlockIdx;
  if (name == "block_dim") return Builtin::kBlockDim;
  return Builtin::kNone;
}

// Reads the canonical global index, keeping the largest value that every
// integer type it passes through holds (the variable's, the product's, the
// sum's, each conversion's): each value on the way is at most the global
// index, so the index is exact while the global index is at most that.
class IndexReader {
 public:
  explicit IndexReader(const clang::ASTContext& ctx) : ctx_(ctx) {}

  uint64_t max() const { return max_; }

  // Whether `type` is an integer type; narrows the maximum to its own.
  bool Through(clang::QualType type) {
    if (!type->isIntegerType() || type->isBooleanType()) return false;
    const uint64_t bits = ctx_.getIntWidth(type);
    if (bits < 32) return false;
    const bool is_signed = type->isSignedIntegerType();
    const uint64_t most =
        bits >= 64 ? (is_signed ? uint64_t{INT64_MAX} : UINT64_MAX)
                   : (uint64_t{1} << (is_signed ? bits - 1 : bits)) - 1;
    max_ = std::min(max_, most);
    return true;
  }

  // `e` without parentheses and integer conversions, each of which narrows
  // the maximum; null when a conversion is of another kind.
  const clang::Expr* Peel(const clang::Expr* e) {
    for (;;) {
      e = e->IgnoreParens();
      if (const auto* f = llvm::dyn_cast<clang::FullExpr>(e)) {
        e = f->getSubExpr();
        continue;
      }
      const auto* c = llvm::dyn_cast<clang::CastExpr>(e);
      if (c == nullptr) return e;
      switch (c->getCastKind()) {
        case clang::CK_IntegralCast:
          if (!Through(c->getType())) return nullptr;
          e = c->getSubExpr();
          break;
        case clang::CK_NoOp:  // keep the value
        case clang::CK_LValueToRValue:
          e = c->getSubExpr();
          break;
        default:
          return nullptr;
      }
    }
  }

  // A built-in's `.x`: an unsigned int, whose value any conversion on the
  // way keeps while the global index (at least as large) fits.
  Builtin Leaf(const clang::Expr* e) {
    e = Peel(e);
    return e == nullptr ? Builtin::kNone : XOf(e);
  }

  // blockIdx.x * blockDim.x + threadIdx.x, operands in either order.
  bool GlobalIndex(const clang::Expr* e) {
    const auto* sum = llvm::dyn_cast_or_null<clang::BinaryOperator>(Peel(e));
    if (sum == nullptr || sum->getOpcode() != clang::BO_Add ||
        !Through(sum->getType()))
      return false;
    const clang::Expr* product = sum->getLHS();
    const clang::Expr* thread = sum->getRHS();
    if (Leaf(thread) != Builtin::kThreadIdx) {
      std::swap(product, thread);
      if (Leaf(thread) != Builtin::kThreadIdx) return false;
    }
    const auto* mul =
        llvm::dyn_cast_or_null<clang::BinaryOperator>(Peel(product));
    if (mul == nullptr || mul->getOpcode() != clang::BO_Mul ||
        !Through(mul->getType()))
      return false;
    const Builtin a = Leaf(mul->getLHS());
    const Builtin b = Leaf(mul->getRHS());
    return (a == Builtin::kBlockIdx && b == Builtin::kBlockDim) ||
           (a == Builtin::kBlockDim && b == Builtin::kBlockIdx);
  }

 private:
  const clang::ASTContext& ctx_;
  uint64_t max_ = UINT64_MAX;
};

// The variable or parameter `e` names, through parentheses and implicit
// conversions (integer promotions and the usual arithmetic conversions,
// which keep the value of a non-negative index and of the bound).
const clang::ValueDecl* Named(const clang::Expr* e) {
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
  return r == nullptr ? nullptr : r->getDecl();
}

// A declaration statement that can go before the guard: local variables
// that need no destructor, whose initialisers have no side effects or are
// the global index (whose built-ins kernelc/host.h reads through a call,
// which Clang counts as a side effect).
bool Harmless(const clang::Stmt* s, const clang::ASTContext& ctx) {
  const auto* ds = llvm::dyn_cast<clang::DeclStmt>(s);
  if (ds == nullptr) return false;
  for (const clang::Decl* d : ds->decls()) {
    const auto* v = llvm::dyn_cast<clang::VarDecl>(d);
    if (v == nullptr || !v->hasLocalStorage() || v->needsDestruction(ctx))
      return false;
    if (v->hasInit() && v->getInit()->HasSideEffects(ctx) &&
        !IndexReader(ctx).GlobalIndex(v->getInit()))
      return false;
  }
  return true;
}

// `s` is `return;` or `{ return; }`.
bool IsBareReturn(const clang::Stmt* s) {
  if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    if (c->size() != 1) return false;
    s = c->body_front();
  }
  const auto* r = llvm::dyn_cast<clang::ReturnStmt>(s);
  return r != nullptr && r->getRetValue() == nullptr;
}

}  // namespace

std::optional<model::GridGuard> FindGridGuard(
    const clang::FunctionDecl* kernel, clang::ASTContext& ctx) {
  const auto* body =
      llvm::dyn_cast_or_null<clang::CompoundStmt>(kernel->getBody());
  if (body == nullptr) return std::nullopt;
  // The declarations before the guard; the index among them.
  llvm::SmallVector<const clang::VarDecl*, 4> locals;
  for (auto it = body->body_begin(); it != body->body_end(); ++it) {
    const clang::Stmt* s = *it;
    if (Harmless(s, ctx)) {
      for (const clang::Decl* d : llvm::cast<clang::DeclStmt>(s)->decls())
        locals.push_back(llvm::cast<clang::VarDecl>(d));
      continue;
    }
    const auto* guard = llvm::dyn_cast<clang::IfStmt>(s);
    if (guard == nullptr || guard->getElse() != nullptr ||
        guard->getInit() != nullptr || guard->getConditionVariable() ||
        guard->isConsteval() || guard->isConstexpr())
      return std::nullopt;
    const auto* cond = llvm::dyn_cast<clang::BinaryOperator>(
        guard->getCond()->IgnoreParenImpCasts());
    if (cond == nullptr) return std::nullopt;
    // `index OP bound`, or the same turned around.
    const clang::ValueDecl* index = Named(cond->getLHS());
    const clang::ValueDecl* bound = Named(cond->getRHS());
    clang::BinaryOperatorKind op = cond->getOpcode();
    if (op == clang::BO_GT || op == clang::BO_LE) {
      std::swap(index, bound);
      op = op == clang::BO_GT ? clang::BO_LT : clang::BO_GE;
    }
    // `if (i < n) ...` must be the last statement, so that a thread past
    // the bound does nothing at all; `if (i >= n) return;` may be followed
    // by anything.
    const bool last = it + 1 == body->body_end();
    if (op == clang::BO_LT ? !last
                           : op != clang::BO_GE || !IsBareReturn(guard->getThen()))
      return std::nullopt;
    const auto* param = llvm::dyn_cast_or_null<clang::ParmVarDecl>(bound);
    if (param == nullptr || !param->getType()->isIntegerType() ||
        param->getType()->isBooleanType())
      return std::nullopt;
    const auto* var = llvm::dyn_cast_or_null<clang::VarDecl>(index);
    if (var == nullptr || !llvm::is_contained(locals, var) ||
        var->getType()->isReferenceType() || !var->hasInit())
      return std::nullopt;
    IndexReader reader(ctx);
    if (!reader.Through(var->getType()) || !reader.GlobalIndex(var->getInit()))
      return std::nullopt;
    model::GridGuard g;
    g.bound = param->getNameAsString();
    switch (reader.max()) {
      case uint64_t{INT32_MAX}:
        g.index_bits = 32;
        g.index_signed = true;
        break;
      case uint64_t{UINT32_MAX}:
        g.index_bits = 32;
        g.index_signed = false;
        break;
      case uint64_t{INT64_MAX}:
        g.index_bits = 64;
        g.index_signed = true;
        break;
      case UINT64_MAX:
        g.index_bits = 64;
        g.index_signed = false;
        break;
      default:
        return std::nullopt;
    }
    g.loc = ToSourceLoc(guard->getCond()->getBeginLoc(),
                        ctx.getSourceManager());
    return g;
  }
  return std::nullopt;
}

}  // namespace kernelc::frontend

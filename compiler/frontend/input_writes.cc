#include "compiler/frontend/input_writes.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <set>
#include <utility>

#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

// Calls nested deeper than this are taken to write: the finder does not
// follow them further.
constexpr int kMaxCallDepth = 24;

using clang::Expr;
using clang::QualType;

// What a function's parameter type lets a callee do with an argument that
// holds (or designates) a value derived from an input.
enum class Reach {
  kNone,   // nothing: an arithmetic value, or a pointer or reference to const
  kMaybe,  // it may hold a pointer (a record, an integer): follow the body
  kWrite,  // a pointer or reference to what it may change
};

bool HasMutablePointerMember(const clang::CXXRecordDecl* record) {
  if (record == nullptr || !record->hasDefinition()) return true;
  for (const clang::FieldDecl* f : record->fields()) {
    QualType t = f->getType();
    if (t->isPointerType() && !t->getPointeeType().isConstQualified())
      return true;
    if (const clang::CXXRecordDecl* inner = t->getAsCXXRecordDecl())
      if (HasMutablePointerMember(inner)) return true;
  }
  for (const clang::CXXBaseSpecifier& base : record->bases())
    if (HasMutablePointerMember(base.getType()->getAsCXXRecordDecl()))
      return true;
  return false;
}

Reach ReachOf(QualType param) {
  if (param->isReferenceType()) {
    QualType to = param->getPointeeType();
    if (!to.isConstQualified()) return Reach::kWrite;
    return to->isRecordType() || to->isPointerType() ? Reach::kMaybe
                                                     : Reach::kNone;
  }
  if (param->isPointerType())
    return param->getPointeeType().isConstQualified() ? Reach::kNone
                                                      : Reach::kWrite;
  if (param->isRecordType() || param->isIntegerType() ||
      param->isDependentType())
    return Reach::kMaybe;
  return Reach::kNone;
}

// The writes of one function through a set of tainted declarations: the
// input, or the parameters a caller passed derived values to.
class FunctionWrites;

// Shared by the functions of one search: the calls followed, and their
// results.
class Search {
 public:
  explicit Search(clang::ASTContext& ctx) : ctx_(ctx) {}

  clang::ASTContext& ctx() { return ctx_; }

  // The first write in `fd`'s definition through its parameter `index`.
  std::optional<InputWrite> ThroughParam(const clang::FunctionDecl* fd,
                                         unsigned index, int depth);

 private:
  clang::ASTContext& ctx_;
  std::map<std::pair<const clang::FunctionDecl*, unsigned>,
           std::optional<InputWrite>>
      done_;
  std::set<std::pair<const clang::FunctionDecl*, unsigned>> running_;
};

class FunctionWrites {
 public:
  FunctionWrites(Search& search, const clang::FunctionDecl* fd,
                 std::set<const clang::ValueDecl*> tainted, int depth)
      : search_(search),
        sm_(search.ctx().getSourceManager()),
        fd_(fd),
        tainted_(std::move(tainted)),
        depth_(depth) {}

  std::optional<InputWrite> Run() {
    const clang::Stmt* body = fd_->getBody();
    if (body == nullptr) return std::nullopt;
    Collector collector;
    collector.TraverseStmt(const_cast<clang::Stmt*>(body));
    Propagate(collector);
    for (const clang::Stmt* s : collector.statements) Check(s);
    return std::move(first_);
  }

 private:
  // Every statement of the body in traversal order, and what may make a
  // declaration hold a derived value.
  struct Collector : clang::RecursiveASTVisitor<Collector> {
    bool shouldVisitImplicitCode() const { return true; }
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool VisitStmt(clang::Stmt* s) {
      statements.push_back(s);
      return true;
    }
    bool VisitVarDecl(clang::VarDecl* v) {
      if (v->getInit() != nullptr) vars.push_back(v);
      return true;
    }
    std::vector<const clang::Stmt*> statements;
    std::vector<const clang::VarDecl*> vars;
  };

  static const Expr* Strip(const Expr* e) {
    while (true) {
      e = e->IgnoreParens();
      if (const auto* c = llvm::dyn_cast<clang::ExprWithCleanups>(e)) {
        e = c->getSubExpr();
      } else if (const auto* m =
                     llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) {
        e = m->getSubExpr();
      } else if (const auto* b = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) {
        e = b->getSubExpr();
      } else if (const auto* k = llvm::dyn_cast<clang::ConstantExpr>(e)) {
        e = k->getSubExpr();
      } else if (const auto* s =
                     llvm::dyn_cast<clang::SubstNonTypeTemplateParmExpr>(e)) {
        e = s->getReplacement();
      } else if (const auto* d = llvm::dyn_cast<clang::CXXDefaultArgExpr>(e)) {
        e = d->getExpr();
      } else {
        return e;
      }
    }
  }

  bool Tainted(const clang::ValueDecl* d) const {
    return d != nullptr && tainted_.count(d) > 0;
  }

  // `e` is a tainted variable itself (not a reference), or a member of one.
  bool TaintedVariable(const Expr* e) const {
    e = Strip(e);
    if (const auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e))
      return Tainted(d->getDecl()) && !d->getDecl()->getType()->isReferenceType();
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e))
      return !m->isArrow() && TaintedVariable(m->getBase());
    if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e))
      return c->getCastKind() != clang::CK_LValueToRValue &&
             TaintedVariable(c->getSubExpr());
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      if (b->isAssignmentOp()) return TaintedVariable(b->getLHS());
      if (b->getOpcode() == clang::BO_Comma) return TaintedVariable(b->getRHS());
    }
    if (const auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(e))
      return TaintedVariable(c->getTrueExpr()) ||
             TaintedVariable(c->getFalseExpr());
    return false;
  }

  // Whether the value of `e` may be derived from a tainted one.
  bool Flows(const Expr* e) const {
    e = Strip(e);
    if (const auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e))
      return Tainted(d->getDecl());
    if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e)) {
      if (c->getCastKind() == clang::CK_LValueToRValue) {
        const Expr* sub = c->getSubExpr();
        if (TaintedVariable(sub)) return true;
        // A pointer (or a struct) read from memory the input reaches.
        QualType t = c->getType();
        return (t->isPointerType() || t->isRecordType()) && Designates(sub);
      }
      return Flows(c->getSubExpr());
    }
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
      switch (u->getOpcode()) {
        case clang::UO_AddrOf:
          return Designates(u->getSubExpr()) ||
                 TaintedVariable(u->getSubExpr());
        case clang::UO_Deref:
          return false;  // an lvalue: read through LValueToRValue
        case clang::UO_LNot:
          return false;
        default:
          return Flows(u->getSubExpr());
      }
    }
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      if (b->isComparisonOp() || b->isLogicalOp()) return false;
      if (b->getOpcode() == clang::BO_Comma) return Flows(b->getRHS());
      if (b->isAssignmentOp()) return Flows(b->getRHS()) || Flows(b->getLHS());
      return Flows(b->getLHS()) || Flows(b->getRHS());
    }
    if (const auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(e))
      return Flows(c->getTrueExpr()) || Flows(c->getFalseExpr());
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e))
      return m->isArrow() ? false : Flows(m->getBase());
    if (llvm::isa<clang::ArraySubscriptExpr>(e)) return false;  // an lvalue
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e)) {
      // A function of a derived value returns one, when what it returns can
      // hold a pointer.
      QualType t = call->getCallReturnType(search_.ctx());
      if (!(t->isPointerType() || t->isReferenceType() || t->isRecordType() ||
            t->isIntegerType()))
        return false;
      if (const auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(call))
        if (const Expr* object = member->getImplicitObjectArgument())
          if (Flows(object) || TaintedVariable(object) || Designates(object))
            return true;
      for (const Expr* a : call->arguments())
        if (Flows(a) || TaintedVariable(a) || Designates(a)) return true;
      return false;
    }
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      for (const Expr* a : c->arguments())
        if (Flows(a) || TaintedVariable(a)) return true;
      return false;
    }
    if (const auto* l = llvm::dyn_cast<clang::InitListExpr>(e)) {
      for (const Expr* a : l->inits())
        if (a != nullptr && Flows(a)) return true;
      return false;
    }
    if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(e)) {
      for (const clang::LambdaCapture& c : l->captures())
        if (c.capturesVariable() && Tainted(c.getCapturedVar())) return true;
      for (const Expr* init : l->capture_inits())
        if (init != nullptr && Flows(init)) return true;
      return false;
    }
    if (llvm::isa<clang::IntegerLiteral, clang::FloatingLiteral,
                  clang::CXXBoolLiteralExpr, clang::CharacterLiteral,
                  clang::StringLiteral, clang::CXXNullPtrLiteralExpr,
                  clang::UnaryExprOrTypeTraitExpr, clang::CXXThisExpr,
                  clang::GNUNullExpr, clang::ImplicitValueInitExpr>(e))
      return false;
    // Anything else: derived when any operand is.
    for (const clang::Stmt* child : e->children())
      if (const auto* ce = llvm::dyn_cast_or_null<Expr>(child))
        if (Flows(ce)) return true;
    return false;
  }

  // Whether the lvalue `e` is memory that a derived value reaches.
  bool Designates(const Expr* e) const {
    e = Strip(e);
    if (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      const Expr* base = a->getBase();
      // An array member of a tainted struct is the struct's own storage.
      if (Strip(base)->getType()->isArrayType() ||
          (llvm::isa<clang::ImplicitCastExpr>(Strip(base)) &&
           llvm::cast<clang::ImplicitCastExpr>(Strip(base))->getCastKind() ==
               clang::CK_ArrayToPointerDecay))
        return Designates(base);
      return Flows(base);
    }
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
      if (u->getOpcode() == clang::UO_Deref) return Flows(u->getSubExpr());
      if (u->isIncrementDecrementOp() && u->isPrefix())
        return Designates(u->getSubExpr());
      return false;
    }
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e))
      return m->isArrow() ? Flows(m->getBase()) : Designates(m->getBase());
    if (const auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e))
      return Tainted(d->getDecl()) && d->getDecl()->getType()->isReferenceType();
    if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e)) {
      if (c->getCastKind() == clang::CK_ArrayToPointerDecay)
        return Designates(c->getSubExpr());
      return c->getCastKind() != clang::CK_LValueToRValue &&
             Designates(c->getSubExpr());
    }
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      if (b->isAssignmentOp()) return Designates(b->getLHS());
      if (b->getOpcode() == clang::BO_Comma) return Designates(b->getRHS());
      return false;
    }
    if (const auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(e))
      return Designates(c->getTrueExpr()) || Designates(c->getFalseExpr());
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e)) {
      // A reference returned from a derived value (a view's a(i), a user's
      // accessor) designates what that value reaches.
      if (!call->getCallReturnType(search_.ctx())->isReferenceType())
        return false;
      if (const auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(call))
        if (const Expr* object = member->getImplicitObjectArgument())
          if (TaintedVariable(object) || Designates(object) || Flows(object))
            return true;
      for (const Expr* a : call->arguments())
        if (TaintedVariable(a) || Designates(a) || Flows(a)) return true;
      return false;
    }
    return false;
  }

  // The local declaration an assignment to `lhs` stores into, when it is
  // one (a variable, a member or an element of one); null otherwise.
  static const clang::ValueDecl* LocalTarget(const Expr* lhs) {
    lhs = Strip(lhs);
    if (const auto* d = llvm::dyn_cast<clang::DeclRefExpr>(lhs)) {
      const auto* v = llvm::dyn_cast<clang::VarDecl>(d->getDecl());
      if (v != nullptr && v->hasLocalStorage() &&
          !v->getType()->isReferenceType())
        return v;
      return nullptr;
    }
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(lhs))
      return m->isArrow() ? nullptr : LocalTarget(m->getBase());
    if (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(lhs)) {
      const Expr* base = Strip(a->getBase());
      if (const auto* c = llvm::dyn_cast<clang::ImplicitCastExpr>(base))
        if (c->getCastKind() == clang::CK_ArrayToPointerDecay)
          return LocalTarget(c->getSubExpr());
      return nullptr;
    }
    return nullptr;
  }

  // Marks what holds derived values until nothing changes; a derived value
  // stored where no declaration of this function holds it escapes.
  void Propagate(const Collector& c) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const clang::VarDecl* v : c.vars) {
        if (Tainted(v)) continue;
        const Expr* init = v->getInit();
        bool derived = v->getType()->isReferenceType()
                           ? Designates(init) || TaintedVariable(init) ||
                                 Flows(init)
                           : Flows(init) || TaintedVariable(init);
        if (!derived) continue;
        if (!v->hasLocalStorage()) {
          Escape(v->getLocation());
          continue;
        }
        tainted_.insert(v);
        changed = true;
      }
      for (const clang::Stmt* s : c.statements) {
        const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s);
        if (b == nullptr || b->getOpcode() != clang::BO_Assign) continue;
        if (!Flows(b->getRHS()) && !TaintedVariable(b->getRHS())) continue;
        const clang::ValueDecl* target = LocalTarget(b->getLHS());
        if (target == nullptr) {
          // Stored through a pointer: a write when that pointer is derived
          // too (Check finds it), lost to the finder otherwise.
          if (!Designates(b->getLHS())) Escape(b->getOperatorLoc());
          continue;
        }
        if (tainted_.insert(target).second) changed = true;
      }
    }
  }

  void Record(InputWrite w) {
    if (!first_ ||
        sm_.isBeforeInTranslationUnit(sm_.getFileLoc(w.at),
                                      sm_.getFileLoc(first_->at)))
      first_ = std::move(w);
  }

  void Write(clang::SourceLocation at) { Record(InputWrite{at}); }

  void Escape(clang::SourceLocation at) {
    InputWrite w{at};
    w.escapes = true;
    Record(std::move(w));
  }

  // A call that passes `arg` to `callee`'s parameter `index` (or to its
  // variadic part); `param_type` is null for a call through a pointer
  // without a prototype.
  void Argument(const Expr* call, const clang::FunctionDecl* callee,
                unsigned index, QualType param_type, const Expr* arg) {
    const bool designated = Designates(arg);
    const bool derived = Flows(arg) || TaintedVariable(arg);
    if (!designated && !derived) return;
    Reach reach;
    if (param_type.isNull()) {
      // A variadic argument: what it is decides.
      QualType t = arg->getType();
      reach = t->isPointerType() && t->getPointeeType().isConstQualified()
                  ? Reach::kNone
                  : (t->isPointerType() || t->isRecordType() ? Reach::kWrite
                                                             : Reach::kNone);
    } else {
      reach = ReachOf(param_type);
      // An element passed by value is a copy.
      if (designated && !derived && !param_type->isReferenceType())
        reach = Reach::kNone;
    }
    if (reach == Reach::kNone) return;
    const clang::FunctionDecl* def =
        callee != nullptr ? callee->getDefinition() : nullptr;
    std::string name = callee != nullptr ? callee->getNameAsString() : "";
    const clang::SourceLocation at = call->getBeginLoc();
    if (def == nullptr || !def->hasBody() || param_type.isNull()) {
      if (reach != Reach::kWrite) return;
      InputWrite w{at, {CallStep{at, name}}, /*opaque=*/true};
      Record(std::move(w));
      return;
    }
    if (depth_ + 1 >= kMaxCallDepth) {
      Record(InputWrite{at, {CallStep{at, name}}, /*opaque=*/true});
      return;
    }
    std::optional<InputWrite> inner = search_.ThroughParam(def, index, depth_ + 1);
    if (!inner) return;
    inner->calls.insert(inner->calls.begin(), CallStep{at, name});
    Record(std::move(*inner));
  }

  void Call(const clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    const clang::FunctionProtoType* proto = nullptr;
    if (callee != nullptr) {
      proto = callee->getType()->getAs<clang::FunctionProtoType>();
    } else if (const Expr* f = call->getCallee()) {
      QualType t = f->getType();
      if (t->isPointerType()) t = t->getPointeeType();
      proto = t->getAs<clang::FunctionProtoType>();
    }
    unsigned first_arg = 0;
    if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(call)) {
      if (llvm::isa_and_nonnull<clang::CXXMethodDecl>(callee)) {
        // The object is the first argument of a member operator.
        first_arg = 1;
        Object(call, llvm::cast<clang::CXXMethodDecl>(callee), call->getArg(0),
               op->isAssignmentOp() || op->getOperator() == clang::OO_PlusPlus ||
                   op->getOperator() == clang::OO_MinusMinus);
      }
    } else if (const auto* m = llvm::dyn_cast<clang::CXXMemberCallExpr>(call)) {
      if (const Expr* object = m->getImplicitObjectArgument())
        Object(call, m->getMethodDecl(), object, /*assigns=*/false);
    }
    for (unsigned i = first_arg; i < call->getNumArgs(); ++i) {
      unsigned p = i - first_arg;
      QualType param;
      if (proto != nullptr && p < proto->getNumParams())
        param = proto->getParamType(p);
      else if (proto == nullptr && callee == nullptr)
        param = QualType();  // no prototype: taken as variadic
      Argument(call, callee, p, param, call->getArg(i));
    }
  }

  // A member function called on `object`: a non-const one changes what the
  // object is, when that is memory a derived value reaches, or what its
  // pointer members reach, when it is a struct holding derived values.
  void Object(const clang::CallExpr* call, const clang::CXXMethodDecl* method,
              const Expr* object, bool assigns) {
    if (method == nullptr || method->isStatic()) return;
    if (method->isConst() && !assigns) return;
    if (Designates(object)) {
      Write(call->getBeginLoc());
      return;
    }
    if (TaintedVariable(object) &&
        HasMutablePointerMember(method->getParent()))
      Record(InputWrite{call->getBeginLoc(),
                        {CallStep{call->getBeginLoc(),
                                  method->getNameAsString()}},
                        /*opaque=*/true});
  }

  void Check(const clang::Stmt* s) {
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s)) {
      if (b->isAssignmentOp() && Designates(b->getLHS()))
        Write(b->getLHS()->getBeginLoc());
      return;
    }
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s)) {
      if (u->isIncrementDecrementOp() && Designates(u->getSubExpr()))
        Write(u->getBeginLoc());
      return;
    }
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s)) {
      Call(call);
      return;
    }
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(s)) {
      const clang::CXXConstructorDecl* ctor = c->getConstructor();
      for (unsigned i = 0; i < c->getNumArgs(); ++i) {
        QualType param = ctor != nullptr && i < ctor->getNumParams()
                             ? ctor->getParamDecl(i)->getType()
                             : QualType();
        Argument(c, ctor, i, param, c->getArg(i));
      }
      return;
    }
    if (const auto* a = llvm::dyn_cast<clang::AtomicExpr>(s)) {
      if (Flows(a->getPtr()) && !IsAtomicLoad(a->getOp()))
        Write(a->getBeginLoc());
      return;
    }
    if (const auto* a = llvm::dyn_cast<clang::AsmStmt>(s)) {
      for (const Expr* e : a->inputs())
        if (Flows(e) || Designates(e) || TaintedVariable(e))
          Write(a->getBeginLoc());
      for (const Expr* e : a->outputs())
        if (Flows(e) || Designates(e) || TaintedVariable(e))
          Write(a->getBeginLoc());
      return;
    }
    if (const auto* n = llvm::dyn_cast<clang::CXXNewExpr>(s)) {
      for (const Expr* p : n->placement_arguments())
        if (Flows(p)) Write(n->getBeginLoc());
      return;
    }
    if (const auto* d = llvm::dyn_cast<clang::CXXDeleteExpr>(s)) {
      if (Flows(d->getArgument())) Write(d->getBeginLoc());
      return;
    }
  }

  static bool IsAtomicLoad(clang::AtomicExpr::AtomicOp op) {
    switch (op) {
      case clang::AtomicExpr::AO__atomic_load:
      case clang::AtomicExpr::AO__atomic_load_n:
      case clang::AtomicExpr::AO__c11_atomic_load:
        return true;
      default:
        return false;
    }
  }

  Search& search_;
  const clang::SourceManager& sm_;
  const clang::FunctionDecl* fd_;
  std::set<const clang::ValueDecl*> tainted_;
  int depth_;
  std::optional<InputWrite> first_;
};

std::optional<InputWrite> Search::ThroughParam(const clang::FunctionDecl* fd,
                                               unsigned index, int depth) {
  const auto key = std::make_pair(fd, index);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  // A recursive call: the writes of this function are being found already.
  if (!running_.insert(key).second) return std::nullopt;
  std::optional<InputWrite> found;
  if (index < fd->getNumParams())
    found = FunctionWrites(*this, fd, {fd->getParamDecl(index)}, depth).Run();
  running_.erase(key);
  done_[key] = found;
  return found;
}

}  // namespace

WritePlace PlaceOf(const InputWrite& w, const clang::SourceManager& sm) {
  WritePlace place;
  if (w.calls.empty()) {
    place.at = w.at;
    return place;
  }
  if (!w.opaque && InUserCode(w.at, sm)) {
    place.at = w.at;
  } else {
    // The deepest call in the user's code; the first is in the kernel.
    size_t i = w.calls.size() - 1;
    while (i > 0 && !InUserCode(w.calls[i].call, sm)) --i;
    place.at = w.calls[i].call;
    place.callee = w.calls[i].callee;
  }
  if (place.at != w.calls[0].call) place.through = w.calls[0].call;
  return place;
}

std::optional<InputWrite> FindInputWrite(const clang::FunctionDecl* kernel,
                                         const clang::ParmVarDecl* input,
                                         clang::ASTContext& ctx) {
  Search search(ctx);
  return FunctionWrites(search, kernel, {input}, /*depth=*/0).Run();
}

}  // namespace kernelc::frontend

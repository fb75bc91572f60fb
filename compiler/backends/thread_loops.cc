#include "compiler/backends/thread_loops.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/executor_names.h"
#include "kernelc/launch.h"

namespace kernelc::backends {

namespace {

using namespace llvm;

// The offsets of kc::host::grid_state's fields: threadIdx's x, y and z,
// then blockIdx, blockDim, gridDim and the executor.
constexpr int64_t kBlockIdxOffset = 12;
constexpr int64_t kBlockDimOffset = 24;

// The fields of kc::host::WarpRequest and kc::host::WarpLane
// (kernelc/block.h), whose layout block_exec.cc asserts.
constexpr uint64_t kRequestOp = 0;
constexpr uint64_t kRequestMask = 8;
constexpr uint64_t kRequestSize = 12;
constexpr uint64_t kRequestA = 16;
constexpr uint64_t kRequestB = 20;
constexpr uint64_t kRequestIn = 24;
constexpr uint64_t kWaitIn = 0;
constexpr uint64_t kWaitOut = 32;
constexpr uint64_t kWaitA = 64;
constexpr uint64_t kWaitB = 68;
constexpr uint64_t kWaitMask = 72;
constexpr uint64_t kWaitSize = 76;
constexpr uint64_t kWaitOp = 80;
constexpr uint64_t kWaitContext = 88;
constexpr uint64_t kWaitBytes = 96;

// Marks, before CoroSplit, a value that is the same in every thread of a
// block that computes it at the same point of the same round.
constexpr const char* kUniformMetadata = "kernelc.uniform";
// Marks, before CoroSplit, a load of memory that no thread writes while a
// block runs (Invariants): a round reads it once, before its loops.
constexpr const char* kInvariantMetadata = "kernelc.invariant";

// What the x86-64-v3 copy of a round function is compiled for: the
// processors that KC_HOST_CLONES_'s "arch=x86-64-v3" clones run on.
constexpr const char* kV3Features =
    "+avx,+avx2,+bmi,+bmi2,+cmov,+crc32,+cx16,+cx8,+f16c,+fma,+fxsr,+lzcnt,"
    "+mmx,+movbe,+popcnt,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+x87,+xsave";

bool IsGridState(const Value* v) {
  const auto* call = dyn_cast<IntrinsicInst>(v);
  return call != nullptr &&
         call->getIntrinsicID() == Intrinsic::threadlocal_address &&
         call->getArgOperand(0)->getName() == kGridState;
}

// Whether `v` is a call of the executor's kc_host_thread_frame.
bool IsThreadFrame(const Value* v) {
  const auto* call = dyn_cast<CallInst>(v);
  return call != nullptr && call->getCalledFunction() != nullptr &&
         call->getCalledFunction()->getName() == kThreadFrame;
}

// The arrival, at a barrier or a warp function, whose branch goes to
// `store`'s block: the store of the frame's index where the thread
// suspends. Null where there is none.
const CallInst* ArrivalBefore(const StoreInst& store) {
  const BasicBlock* from = store.getParent()->getSinglePredecessor();
  const auto* branch =
      from != nullptr ? dyn_cast<BranchInst>(from->getTerminator()) : nullptr;
  const auto* arrival = branch != nullptr && branch->isConditional()
                            ? dyn_cast<CallInst>(branch->getCondition())
                            : nullptr;
  const Function* wait =
      arrival != nullptr ? arrival->getCalledFunction() : nullptr;
  return wait != nullptr && (wait->getName() == kBarrierArrive ||
                             wait->getName() == kWarpArrive)
             ? arrival
             : nullptr;
}

// `p` as a base and a constant offset from it.
const Value* Base(const Value* p, const DataLayout& dl, int64_t& offset) {
  APInt o(dl.getIndexTypeSizeInBits(p->getType()), 0);
  const Value* base =
      p->stripAndAccumulateConstantOffsets(dl, o, /*AllowNonInbounds=*/true);
  offset = o.getSExtValue();
  return base;
}

// The values of a thread function that are the same wherever the thread
// computes them.
class Invariants {
 public:
  explicit Invariants(Function& f)
      : dl_(f.getParent()->getDataLayout()), context_(f.getArg(0)) {}

  bool Is(Value* v);
  // Whether invariant `v` is computed, in part, outside `block`.
  bool Outside(Value* v, const BasicBlock* block,
               SmallPtrSetImpl<Value*>& seen);
  // A copy of `v`'s computation before `before`, sharing what is not an
  // instruction; null past `budget` instructions.
  Value* Copy(Value* v, Instruction* before, DenseMap<Value*, Value*>& done,
              int& budget);

 private:
  // Whether `load` reads memory that no thread writes while it runs: a
  // built-in variable, a capture of the thread's context (the lambda of
  // the generated entry, kernelc/cpu_exec.h) or what one points to (an
  // argument of the entry).
  bool ReadsInvariant(const LoadInst& load) const;

  const DataLayout& dl_;
  const Argument* context_;
  DenseMap<Value*, bool> memo_;
};

bool Invariants::ReadsInvariant(const LoadInst& load) const {
  if (!load.isSimple()) return false;
  int64_t offset = 0;
  const Value* base = Base(load.getPointerOperand(), dl_, offset);
  if (IsGridState(base) || base == context_) return true;
  const auto* capture = dyn_cast<LoadInst>(base);
  return capture != nullptr && capture->isSimple() &&
         Base(capture->getPointerOperand(), dl_, offset) == context_;
}

bool Invariants::Is(Value* v) {
  if (isa<Constant>(v) || isa<Argument>(v)) return true;
  auto* i = dyn_cast<Instruction>(v);
  if (i == nullptr) return false;
  if (auto it = memo_.find(i); it != memo_.end()) return it->second;
  memo_[i] = false;  // a cycle goes through a phi, which is not
  bool is = false;
  if (auto* call = dyn_cast<IntrinsicInst>(i)) {
    switch (call->getIntrinsicID()) {
      case Intrinsic::threadlocal_address:
        is = isa<GlobalValue>(call->getArgOperand(0));
        break;
      case Intrinsic::smin:
      case Intrinsic::smax:
      case Intrinsic::umin:
      case Intrinsic::umax:
        is = Is(call->getArgOperand(0)) && Is(call->getArgOperand(1));
        break;
      default:
        break;
    }
  } else if (auto* load = dyn_cast<LoadInst>(i)) {
    is = ReadsInvariant(*load) && Is(load->getPointerOperand());
  } else if (isa<BinaryOperator>(i) || isa<CastInst>(i) || isa<CmpInst>(i) ||
             isa<SelectInst>(i) || isa<GetElementPtrInst>(i)) {
    is = all_of(i->operands(), [&](Value* op) { return Is(op); });
  }
  memo_[i] = is;
  return is;
}

bool Invariants::Outside(Value* v, const BasicBlock* block,
                         SmallPtrSetImpl<Value*>& seen) {
  auto* i = dyn_cast<Instruction>(v);
  if (i == nullptr || !seen.insert(i).second) return false;
  if (i->getParent() != block) return true;
  return any_of(i->operands(),
                [&](Value* op) { return Outside(op, block, seen); });
}

Value* Invariants::Copy(Value* v, Instruction* before,
                        DenseMap<Value*, Value*>& done, int& budget) {
  auto* i = dyn_cast<Instruction>(v);
  if (i == nullptr) return v;
  if (auto it = done.find(i); it != done.end()) return it->second;
  if (--budget < 0) return nullptr;
  Instruction* copy = i->clone();
  for (unsigned k = 0; k < copy->getNumOperands(); ++k) {
    Value* op = Copy(copy->getOperand(k), before, done, budget);
    if (op == nullptr) {
      copy->deleteValue();
      return nullptr;
    }
    copy->setOperand(k, op);
  }
  copy->insertBefore(before);
  done[i] = copy;
  return copy;
}

// A thread's frame with each field's copies for all the threads side by
// side: thread t's copy of field f is at
//   frames + f.prefix * capacity + t * f.stride
// where capacity, the threads the frames hold, is a multiple of 16.
struct Field {
  uint64_t offset = 0;  // in the frame CoroSplit laid out
  uint64_t size = 0;
  uint64_t stride = 0;  // between two threads' copies
  uint64_t prefix = 0;  // the strides of the fields before it
  Align align;          // of every copy
  // Holds a value that every thread at a wait has alike (MarkUniform):
  // a round reads it once, from the first of its threads.
  bool uniform = false;
};

class Frames {
 public:
  // False where a field needs more alignment than its copies get.
  bool Lay(StructType* frame, const DataLayout& dl) {
    layout_ = dl.getStructLayout(frame);
    uint64_t prefix = 0;
    for (unsigned k = 0; k < frame->getNumElements(); ++k) {
      Type* type = frame->getElementType(k);
      Field f;
      f.offset = layout_->getElementOffset(k);
      f.size = dl.getTypeAllocSize(type);
      f.align = Align(
          std::min<uint64_t>(16, PowerOf2Ceil(std::max<uint64_t>(f.size, 1))));
      if (dl.getABITypeAlign(type) > f.align) return false;
      f.stride = alignTo(f.size, f.align);
      f.prefix = prefix;
      prefix += f.stride;
      fields_.push_back(f);
    }
    bytes_ = prefix;
    return true;
  }
  // The field that holds frame offset `offset`, or null (padding).
  const Field* At(uint64_t offset) const {
    if (offset >= layout_->getSizeInBytes()) return nullptr;
    const Field& f = fields_[layout_->getElementContainingOffset(offset)];
    return offset < f.offset + f.size ? &f : nullptr;
  }
  // Thread t's copy of frame offset `offset` (At(offset) not null).
  Value* Address(IRBuilder<>& b, Value* frames, Value* capacity, Value* t,
                 uint64_t offset) const {
    const Field& f = *At(offset);
    Value* base = b.CreateMul(capacity, b.getInt64(f.prefix), "", true, true);
    Value* copy = b.CreateMul(t, b.getInt64(f.stride), "", true, true);
    Value* at = b.CreateAdd(b.CreateAdd(base, copy, "", true, true),
                            b.getInt64(offset - f.offset), "", true, true);
    return b.CreateInBoundsGEP(b.getInt8Ty(), frames, at);
  }
  Align AlignAt(uint64_t offset) const {
    const Field& f = *At(offset);
    return commonAlignment(f.align, offset - f.offset);
  }
  uint64_t bytes() const { return bytes_; }
  // The frame as CoroSplit laid it out.
  uint64_t frame_bytes() const { return layout_->getSizeInBytes(); }
  std::vector<Field>& fields() { return fields_; }
  Field* Mutable(uint64_t offset) { return const_cast<Field*>(At(offset)); }

 private:
  const StructLayout* layout_ = nullptr;
  std::vector<Field> fields_;
  uint64_t bytes_ = 0;
};

// The parameters of a region's body, a copy of the ramp or of the resume
// function that runs one thread through it.
enum BodyArg : unsigned {
  kBodyContext,
  kBodyFrames,
  kBodyCapacity,
  kBodyThread,  // t, the thread's linear index
  kBodyX,
  kBodyY,
  kBodyZ,
  kBodyBarrierResult,
  kBodyBarrierCount,
  kBodyNext,     // where each thread is after the round
  kBodyUniform,  // the uniform fields' values, at their frame offsets
  kBodyWaits,    // what each thread leaves at a warp collective
  kBodyFrame,    // the frame's address in the function copied; left unused
  kBodyArgs
};

// The parameters of a round function (kc_host_thread_loops's `round`).
enum RoundArg : unsigned {
  kRoundContext,
  kRoundFrames,
  kRoundCapacity,
  kRoundNext,
  kRoundRegion,
  kRoundXBegin,  // the threads' range: [begin, end) in x, y and z
  kRoundXEnd,
  kRoundYBegin,
  kRoundYEnd,
  kRoundZBegin,
  kRoundZEnd,
  kRoundBarrierResult,
  kRoundBarrierCount,
  kRoundWaits,
  kRoundArgs
};

void HoistInvariants(Function& round);

class Looper {
 public:
  Looper(Module& m, FunctionAnalysisManager& fam)
      : m_(m),
        c_(m.getContext()),
        dl_(m.getDataLayout()),
        fam_(fam),
        ptr_(PointerType::getUnqual(c_)) {}

  // The kc_host_thread_loops of coroutine `name`'s threads, or null where
  // they cannot run as loops.
  GlobalVariable* Make(StringRef name);

 private:
  // Finds the frame's index field and the regions (its values).
  bool FindRegions(Function& ramp, Function& resume);
  // Whether `p` points into the frame that `ramp` gets from the executor.
  bool InFrame(Function& ramp, const Value* p) const;
  // Where the context is kept in the frame, if it is.
  bool FindContext(Function& ramp);
  // A copy of `from` (the ramp, or the resume function for `region`) with
  // the parameters BodyArg names.
  Function* Body(Function& from, std::optional<uint64_t> region);
  bool RewriteFrame(Function& body);
  bool RewriteBuiltins(Function& body);
  bool RewriteCalls(Function& body);
  // Where the thread suspends, the frame's index and resume function say
  // where it goes on; here `next` does.
  bool RewriteSuspends(Function& body);
  // Marks the fields that only ever hold uniform values.
  void FindUniform(Function& ramp, Function& resume);
  // The loops of a round over a range of the threads (all at the region
  // of `body`); returns their entry.
  BasicBlock* Loops(Function& round, Function& body, Value* dims[3],
                    BasicBlock* exit);
  Function* Round(StringRef name, ArrayRef<std::pair<uint8_t, Function*>>);
  // A constant of the module, internal, named `name`.
  GlobalVariable* Global(const Twine& name, Constant* value);

  Module& m_;
  LLVMContext& c_;
  const DataLayout& dl_;
  FunctionAnalysisManager& fam_;
  PointerType* ptr_;
  Frames frames_;
  uint64_t index_offset_ = 0;
  Type* index_type_ = nullptr;
  SmallVector<uint64_t, 16> regions_;
  std::optional<uint64_t> context_offset_;
  // Whether the resume function dispatches on the index (more than one
  // wait), or goes to the one wait at once.
  bool dispatch_ = false;
  // The barrier each region starts at (its name), where it is a barrier.
  std::map<uint64_t, Constant*> barriers_;
  FunctionType* body_type_ = nullptr;
};

bool Looper::InFrame(Function& ramp, const Value* p) const {
  int64_t offset = 0;
  const Value* base = Base(p, dl_, offset);
  return IsThreadFrame(base) && cast<CallInst>(base)->getFunction() == &ramp;
}

bool Looper::FindRegions(Function& ramp, Function& resume) {
  for (Instruction& i : instructions(resume)) {
    auto* sw = dyn_cast<SwitchInst>(&i);
    if (sw == nullptr) continue;
    auto* load = dyn_cast<LoadInst>(sw->getCondition());
    if (load == nullptr) continue;
    int64_t offset = 0;
    if (Base(load->getPointerOperand(), dl_, offset) != resume.getArg(0))
      continue;
    index_offset_ = offset;
    index_type_ = load->getType();
    dispatch_ = true;
    for (auto& c : sw->cases()) {
      const uint64_t region = c.getCaseValue()->getZExtValue();
      if (region >= KC_LOOP_START) return false;
      regions_.push_back(region);
    }
    return index_type_->getIntegerBitWidth() <= 8 && !regions_.empty();
  }
  // A thread with one wait: the resume function goes there at once, and
  // the index is 0. The ramp stores it where the thread suspends, after
  // the arrival says so.
  for (Instruction& i : instructions(ramp)) {
    auto* store = dyn_cast<StoreInst>(&i);
    if (store == nullptr || !isa<ConstantInt>(store->getValueOperand()) ||
        store->getValueOperand()->getType()->getIntegerBitWidth() > 8 ||
        !InFrame(ramp, store->getPointerOperand()))
      continue;
    if (ArrivalBefore(*store) == nullptr) continue;
    int64_t offset = 0;
    Base(store->getPointerOperand(), dl_, offset);
    index_offset_ = offset;
    index_type_ = store->getValueOperand()->getType();
    regions_.push_back(0);
    return true;
  }
  return false;
}

// A value MarkUniform marked, or one CoroSplit passes on unchanged.
bool Uniform(const Value* v) {
  if (isa<Constant>(v) || isa<Argument>(v)) return true;
  const auto* i = dyn_cast<Instruction>(v);
  if (i == nullptr) return false;
  if (i->hasMetadata(kUniformMetadata)) return true;
  const auto* phi = dyn_cast<PHINode>(i);
  if (phi == nullptr) return false;
  const Value* same = nullptr;
  for (const Value* in : phi->incoming_values()) {
    if (in == phi || in == same) continue;
    if (same != nullptr) return false;
    same = in;
  }
  return same != nullptr && Uniform(same);
}

void Looper::FindUniform(Function& ramp, Function& resume) {
  for (Field& f : frames_.fields()) f.uniform = true;
  auto refuse = [&](uint64_t offset) {
    if (Field* f = frames_.Mutable(offset)) f->uniform = false;
  };
  refuse(0);
  refuse(dl_.getPointerSize());
  refuse(index_offset_);
  if (context_offset_.has_value()) refuse(*context_offset_);
  for (Function* function : {&ramp, &resume}) {
    for (Instruction& i : instructions(*function)) {
      for (Use& u : i.operands()) {
        if (!u->getType()->isPointerTy()) continue;
        int64_t offset = 0;
        const Value* base = Base(u.get(), dl_, offset);
        const bool in_frame = function == &resume ? base == resume.getArg(0)
                                                  : InFrame(ramp, u.get());
        if (!in_frame || offset < 0) continue;
        // Addresses within a field: only where they stay constant.
        if (auto* gep = dyn_cast<GetElementPtrInst>(&i)) {
          if (!gep->hasAllConstantIndices()) refuse(offset);
          continue;
        }
        if (isa<LoadInst>(i)) continue;
        const Field* f = frames_.At(offset);
        auto* store = dyn_cast<StoreInst>(&i);
        if (f == nullptr) continue;
        if (store == nullptr || u.getOperandNo() != 1 ||
            uint64_t(offset) != f->offset ||
            dl_.getTypeStoreSize(store->getValueOperand()->getType()) !=
                f->size ||
            !Uniform(store->getValueOperand()))
          refuse(offset);
      }
    }
  }
}

bool Looper::FindContext(Function& ramp) {
  for (Use& u : ramp.getArg(0)->uses()) {
    auto* store = dyn_cast<StoreInst>(u.getUser());
    if (store == nullptr || store->getValueOperand() != ramp.getArg(0))
      continue;
    if (!InFrame(ramp, store->getPointerOperand())) return false;
    int64_t offset = 0;
    Base(store->getPointerOperand(), dl_, offset);
    if (context_offset_.has_value() && *context_offset_ != uint64_t(offset))
      return false;
    context_offset_ = offset;
  }
  return true;
}

Function* Looper::Body(Function& from, std::optional<uint64_t> region) {
  Function* body = Function::Create(body_type_, GlobalValue::InternalLinkage,
                                    from.getName() + ".body", m_);
  ValueToValueMapTy map;
  Argument* frame = body->getArg(kBodyFrame);
  map[from.getArg(0)] = region.has_value() ? frame : body->getArg(kBodyContext);
  SmallVector<ReturnInst*, 8> returns;
  CloneFunctionInto(body, &from, map, CloneFunctionChangeType::LocalChangesOnly,
                    returns);
  body->setCallingConv(CallingConv::C);
  body->setAttributes(AttributeList::get(c_, from.getAttributes().getFnAttrs(),
                                         AttributeSet(), {}));
  body->removeFnAttr(Attribute::NoInline);
  body->removeFnAttr(Attribute::OptimizeNone);
  body->addFnAttr(Attribute::AlwaysInline);
  body->setSubprogram(nullptr);
  stripDebugInfo(*body);

  // Every return ends the thread's run through the region.
  for (ReturnInst* r : returns) {
    Value* value = r->getReturnValue();
    ReturnInst::Create(c_, nullptr, r->getIterator());
    r->eraseFromParent();
    if (value != nullptr) RecursivelyDeleteTriviallyDeadInstructions(value);
  }
  if (region.has_value()) {
    // The resume function's dispatch, on the frame's index, goes to the
    // region's start.
    bool dispatched = false;
    for (Instruction& i : instructions(*body)) {
      auto* sw = dyn_cast<SwitchInst>(&i);
      if (sw == nullptr) continue;
      auto* load = dyn_cast<LoadInst>(sw->getCondition());
      int64_t offset = 0;
      if (load == nullptr ||
          Base(load->getPointerOperand(), dl_, offset) != frame ||
          uint64_t(offset) != index_offset_)
        continue;
      sw->setCondition(ConstantInt::get(load->getType(), *region));
      RecursivelyDeleteTriviallyDeadInstructions(load);
      dispatched = true;
      break;
    }
    // The index is not kept: a dispatch left on it would read nothing.
    if (dispatched != dispatch_) {
      body->eraseFromParent();
      return nullptr;
    }
  } else {
    // The ramp's frame, from the executor, is the frames' thread t.
    SmallVector<CallInst*, 2> calls;
    for (Instruction& i : instructions(*body))
      if (IsThreadFrame(&i)) calls.push_back(cast<CallInst>(&i));
    for (CallInst* call : calls) {
      call->replaceAllUsesWith(frame);
      call->eraseFromParent();
    }
  }
  if (!RewriteSuspends(*body) || !RewriteFrame(*body) ||
      !RewriteBuiltins(*body) || !RewriteCalls(*body)) {
    body->eraseFromParent();
    return nullptr;
  }
  return body;
}

bool Looper::RewriteSuspends(Function& body) {
  Argument* frame = body.getArg(kBodyFrame);
  SmallVector<Instruction*, 16> accesses;
  for (Instruction& i : instructions(body)) {
    if (!isa<LoadInst>(i) && !isa<StoreInst>(i)) continue;
    int64_t offset = 0;
    if (Base(getLoadStorePointerOperand(&i), dl_, offset) != frame) continue;
    if (offset == 0 || uint64_t(offset) == index_offset_ ||
        uint64_t(offset) == dl_.getPointerSize())
      accesses.push_back(&i);
  }
  Type* i8 = Type::getInt8Ty(c_);
  for (Instruction* i : accesses) {
    auto* store = dyn_cast<StoreInst>(i);
    if (store == nullptr) return false;  // read only by the executor
    Value* value = store->getValueOperand();
    IRBuilder<> b(store);
    Value* next = b.CreateInBoundsGEP(i8, body.getArg(kBodyNext),
                                      body.getArg(kBodyThread));
    if (value->getType() == index_type_) {
      b.CreateStore(b.CreateZExt(value, i8), next);
      // The wait whose arrival says the thread suspends here.
      const CallInst* arrival = ArrivalBefore(*store);
      const auto* region = dyn_cast<ConstantInt>(value);
      if (arrival == nullptr || region == nullptr) return false;
      if (arrival->getCalledFunction()->getName() == kBarrierArrive) {
        auto* name = dyn_cast<Constant>(arrival->getArgOperand(1));
        if (name == nullptr) return false;
        barriers_[region->getZExtValue()] = name;
      }
    } else if (isa<ConstantPointerNull>(value)) {
      b.CreateStore(b.getInt8(KC_LOOP_DONE), next);
    } else if (!isa<Function>(value)) {
      return false;
    }
    Value* address = store->getPointerOperand();
    store->eraseFromParent();
    RecursivelyDeleteTriviallyDeadInstructions(address);
  }
  return true;
}

bool Looper::RewriteFrame(Function& body) {
  Argument* frame = body.getArg(kBodyFrame);
  Value* frames = body.getArg(kBodyFrames);
  Value* capacity = body.getArg(kBodyCapacity);
  Value* t = body.getArg(kBodyThread);
  SmallVector<Use*, 64> uses;
  for (Use& u : frame->uses()) uses.push_back(&u);
  for (Use* u : uses) {
    auto* user = cast<Instruction>(u->getUser());
    // Where the frame's address meets null (the ramp's test of the
    // executor's frame): it never is.
    if (auto* cmp = dyn_cast<ICmpInst>(user);
        cmp != nullptr && cmp->isEquality() &&
        isa<ConstantPointerNull>(cmp->getOperand(1 - u->getOperandNo()))) {
      cmp->replaceAllUsesWith(
          ConstantInt::getBool(c_, cmp->getPredicate() == ICmpInst::ICMP_NE));
      cmp->eraseFromParent();
      continue;
    }
    uint64_t offset = 0;
    Instruction* replaced = nullptr;
    if (auto* gep = dyn_cast<GetElementPtrInst>(user)) {
      APInt o(64, 0);
      if (u->getOperandNo() != 0 || !gep->accumulateConstantOffset(dl_, o) ||
          o.isNegative())
        return false;
      offset = o.getZExtValue();
      replaced = gep;
    } else if (isa<LoadInst>(user) || isa<CallInst>(user) ||
               (isa<StoreInst>(user) && u->getOperandNo() == 1)) {
      offset = 0;
    } else {
      return false;
    }
    // The frame's context field holds the same context in every thread.
    if (context_offset_.has_value() && offset == *context_offset_ &&
        replaced != nullptr) {
      SmallVector<Instruction*, 4> users;
      for (User* v : replaced->users()) users.push_back(cast<Instruction>(v));
      bool all = true;
      for (Instruction* v : users) {
        if (auto* load = dyn_cast<LoadInst>(v);
            load != nullptr && load->getType()->isPointerTy()) {
          load->replaceAllUsesWith(body.getArg(kBodyContext));
          load->eraseFromParent();
        } else if (auto* store = dyn_cast<StoreInst>(v);
                   store != nullptr && store->getPointerOperand() == replaced) {
          store->eraseFromParent();
        } else {
          all = false;
        }
      }
      if (all) {
        replaced->eraseFromParent();
        continue;
      }
    }
    if (frames_.At(offset) == nullptr) return false;
    IRBuilder<> b(user);
    Value* address = frames_.Address(b, frames, capacity, t, offset);
    const Align align = frames_.AlignAt(offset);
    if (replaced != nullptr && frames_.At(offset)->uniform) {
      // Its loads read the round's copy.
      SmallVector<LoadInst*, 4> loads;
      for (User* v : replaced->users())
        if (auto* load = dyn_cast<LoadInst>(v)) loads.push_back(load);
      for (LoadInst* load : loads) {
        IRBuilder<> l(load);
        load->setOperand(LoadInst::getPointerOperandIndex(),
                         l.CreateConstInBoundsGEP1_64(
                             l.getInt8Ty(), body.getArg(kBodyUniform), offset));
      }
    }
    if (replaced != nullptr) {
      replaced->replaceAllUsesWith(address);
      replaced->eraseFromParent();
    } else {
      u->set(address);
    }
    for (User* v : address->users()) {
      if (auto* load = dyn_cast<LoadInst>(v))
        load->setAlignment(std::min(load->getAlign(), align));
      else if (auto* store = dyn_cast<StoreInst>(v);
               store != nullptr && store->getPointerOperand() == address)
        store->setAlignment(std::min(store->getAlign(), align));
    }
  }
  return frame->use_empty();
}

bool Looper::RewriteBuiltins(Function& body) {
  Value* index[3] = {body.getArg(kBodyX), body.getArg(kBodyY),
                     body.getArg(kBodyZ)};
  SmallVector<std::pair<Value*, int64_t>, 16> work;
  for (Instruction& i : instructions(body))
    if (IsGridState(&i)) work.push_back({&i, 0});
  SmallVector<LoadInst*, 16> loads;
  while (!work.empty()) {
    auto [p, offset] = work.pop_back_val();
    for (User* u : p->users()) {
      if (auto* gep = dyn_cast<GetElementPtrInst>(u)) {
        APInt o(64, 0);
        if (!gep->accumulateConstantOffset(dl_, o)) return false;
        work.push_back({gep, offset + o.getSExtValue()});
      } else if (auto* load = dyn_cast<LoadInst>(u)) {
        if (offset < kBlockIdxOffset) {
          // threadIdx: the loop's indices.
          if (!load->getType()->isIntegerTy(32) || offset % 4 != 0)
            return false;
          loads.push_back(load);
        }
      } else {
        return false;
      }
    }
  }
  for (LoadInst* load : loads) {
    int64_t offset = 0;
    Base(load->getPointerOperand(), dl_, offset);
    load->replaceAllUsesWith(index[offset / 4]);
    load->eraseFromParent();
  }
  return true;
}

bool Looper::RewriteCalls(Function& body) {
  SmallVector<CallInst*, 16> calls;
  // Calls of the kernel's own functions, which may read threadIdx.
  SmallVector<CallBase*, 16> others;
  const TargetLibraryInfo& library =
      fam_.getResult<TargetLibraryAnalysis>(body);
  for (Instruction& i : instructions(body)) {
    auto* call = dyn_cast<CallBase>(&i);
    if (call == nullptr || isa<IntrinsicInst>(call) ||
        call->doesNotAccessMemory())
      continue;
    const Function* callee = call->getCalledFunction();
    const StringRef name = callee != nullptr ? callee->getName() : "";
    LibFunc known;
    if (name == kBarrierArrive || name == kBarrierResult || name == kWarpArrive)
      calls.push_back(cast<CallInst>(call));
    else if (name.starts_with("kc_host_"))
      return false;
    else if (callee == nullptr || !library.getLibFunc(*callee, known))
      others.push_back(call);
  }
  // Such a function reads threadIdx from grid_state, where the executor
  // sets it for a thread it steps; a round sets it for the call.
  Value* index[3] = {body.getArg(kBodyX), body.getArg(kBodyY),
                     body.getArg(kBodyZ)};
  for (CallBase* call : others) {
    IRBuilder<> b(call);
    Value* state = b.CreateThreadLocalAddress(m_.getGlobalVariable(kGridState));
    for (int d = 0; d < 3; ++d)
      b.CreateStore(index[d],
                    b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), state, 4 * d));
  }
  Type* i32 = Type::getInt32Ty(c_);
  for (CallInst* call : calls) {
    IRBuilder<> b(call);
    if (call->getCalledFunction()->getName() == kBarrierArrive) {
      // Every thread arrives: the round's end is the barrier's.
      Value* count = body.getArg(kBodyBarrierCount);
      Value* passed =
          b.CreateZExt(b.CreateIsNotNull(call->getArgOperand(2)), i32);
      b.CreateStore(b.CreateAdd(b.CreateLoad(i32, count), passed), count);
      call->replaceAllUsesWith(b.getTrue());
    } else if (call->getCalledFunction()->getName() == kWarpArrive) {
      // The lane's request, left for the executor, which completes the
      // collective after the round; the result is then the record's.
      Value* request = call->getArgOperand(1);
      Value* wait = b.CreateInBoundsGEP(
          b.getInt8Ty(), body.getArg(kBodyWaits),
          b.CreateMul(body.getArg(kBodyThread), b.getInt64(kWaitBytes), "",
                      true, true));
      auto field = [&](Value* base, uint64_t offset) {
        return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset);
      };
      Value* size = b.CreateLoad(i32, field(request, kRequestSize));
      for (auto [from, to] : {std::pair{kRequestMask, kWaitMask},
                              {kRequestSize, kWaitSize},
                              {kRequestA, kWaitA},
                              {kRequestB, kWaitB}})
        b.CreateStore(b.CreateLoad(i32, field(request, from)), field(wait, to));
      b.CreateStore(b.CreateLoad(ptr_, field(request, kRequestOp)),
                    field(wait, kWaitOp));
      b.CreateStore(call->getArgOperand(2), field(wait, kWaitContext));
      b.CreateMemCpy(field(wait, kWaitIn), Align(16),
                     b.CreateLoad(ptr_, field(request, kRequestIn)), Align(1),
                     b.CreateZExt(size, b.getInt64Ty()));
      b.CreateStore(field(wait, kWaitOut), call->getArgOperand(3));
      call->replaceAllUsesWith(b.getTrue());
    } else {
      call->replaceAllUsesWith(body.getArg(kBodyBarrierResult));
    }
    call->eraseFromParent();
  }
  return true;
}

BasicBlock* Looper::Loops(Function& round, Function& body, Value* dims[3],
                          BasicBlock* exit) {
  Type* i8 = Type::getInt8Ty(c_);
  Type* i32 = Type::getInt32Ty(c_);
  Type* i64 = Type::getInt64Ty(c_);
  auto block = [&](const char* name) {
    return BasicBlock::Create(c_, name, &round, exit);
  };
  BasicBlock* pre = block("kc.round");
  BasicBlock* z_loop = block("kc.z");
  BasicBlock* y_loop = block("kc.y");
  BasicBlock* run = block("kc.thread");
  BasicBlock* x_latch = block("kc.x.next");
  BasicBlock* y_latch = block("kc.y.next");
  BasicBlock* z_latch = block("kc.z.next");
  Argument* frames = round.getArg(kRoundFrames);
  Argument* capacity = round.getArg(kRoundCapacity);
  Value* begin[3] = {round.getArg(kRoundXBegin), round.getArg(kRoundYBegin),
                     round.getArg(kRoundZBegin)};
  Value* end[3] = {round.getArg(kRoundXEnd), round.getArg(kRoundYEnd),
                   round.getArg(kRoundZEnd)};
  auto linear = [&](IRBuilder<>& b, Value* x, Value* y, Value* z) {
    Value* row =
        b.CreateAdd(b.CreateMul(z, dims[1], "", true, true), y, "", true, true);
    return b.CreateAdd(b.CreateMul(b.CreateZExt(row, i64),
                                   b.CreateZExt(dims[0], i64), "", true, true),
                       b.CreateZExt(x, i64), "", true, true);
  };
  // The first thread of the range, whose uniform fields the round reads:
  // every thread of the range is at the region.
  IRBuilder<> b(pre);
  Value* first = linear(b, begin[0], begin[1], begin[2]);
  IRBuilder<> e(&round.getEntryBlock(), round.getEntryBlock().begin());
  AllocaInst* uniform = e.CreateAlloca(
      ArrayType::get(i8, frames_.frame_bytes()), nullptr, "kc.uniform");
  uniform->setAlignment(Align(16));
  for (const Field& f : frames_.fields()) {
    if (!f.uniform) continue;
    b.CreateMemCpy(
        b.CreateConstInBoundsGEP1_64(i8, uniform, f.offset), Align(1),
        frames_.Address(b, frames, capacity, first, f.offset), f.align, f.size);
  }
  b.CreateBr(z_loop);

  b.SetInsertPoint(z_loop);
  PHINode* z = b.CreatePHI(i32, 2, "z");
  b.CreateBr(y_loop);
  b.SetInsertPoint(y_loop);
  PHINode* y = b.CreatePHI(i32, 2, "y");
  Value* row = linear(b, b.getInt32(0), y, z);
  b.CreateBr(run);

  b.SetInsertPoint(run);
  PHINode* x = b.CreatePHI(i32, 2, "x");
  Value* t = b.CreateAdd(row, b.CreateZExt(x, i64), "t", true, true);
  Value* args[kBodyArgs];
  args[kBodyContext] = round.getArg(kRoundContext);
  args[kBodyFrames] = frames;
  args[kBodyCapacity] = capacity;
  args[kBodyThread] = t;
  args[kBodyX] = x;
  args[kBodyY] = y;
  args[kBodyZ] = z;
  args[kBodyBarrierResult] = round.getArg(kRoundBarrierResult);
  args[kBodyBarrierCount] = round.getArg(kRoundBarrierCount);
  args[kBodyNext] = round.getArg(kRoundNext);
  args[kBodyUniform] = uniform;
  args[kBodyWaits] = round.getArg(kRoundWaits);
  args[kBodyFrame] = PoisonValue::get(ptr_);
  b.CreateCall(&body, args);
  b.CreateBr(x_latch);

  b.SetInsertPoint(x_latch);
  Value* x1 = b.CreateAdd(x, b.getInt32(1), "", true, true);
  BranchInst* back = b.CreateCondBr(b.CreateICmpULT(x1, end[0]), run, y_latch);
  // One vector at a time: blocks are often only 16 or 32 threads wide.
  MDNode* interleave =
      MDNode::get(c_, {MDString::get(c_, "llvm.loop.interleave.count"),
                       ConstantAsMetadata::get(b.getInt32(1))});
  MDNode* loop = MDNode::getDistinct(c_, {nullptr, interleave});
  loop->replaceOperandWith(0, loop);
  back->setMetadata(LLVMContext::MD_loop, loop);
  b.SetInsertPoint(y_latch);
  Value* y1 = b.CreateAdd(y, b.getInt32(1), "", true, true);
  b.CreateCondBr(b.CreateICmpULT(y1, end[1]), y_loop, z_latch);
  b.SetInsertPoint(z_latch);
  Value* z1 = b.CreateAdd(z, b.getInt32(1), "", true, true);
  b.CreateCondBr(b.CreateICmpULT(z1, end[2]), z_loop, exit);

  z->addIncoming(begin[2], pre);
  z->addIncoming(z1, z_latch);
  y->addIncoming(begin[1], z_loop);
  y->addIncoming(y1, y_latch);
  x->addIncoming(begin[0], y_loop);
  x->addIncoming(x1, x_latch);
  return pre;
}

Function* Looper::Round(StringRef name,
                        ArrayRef<std::pair<uint8_t, Function*>> bodies) {
  Type* i32 = Type::getInt32Ty(c_);
  Type* i64 = Type::getInt64Ty(c_);
  FunctionType* type = FunctionType::get(Type::getVoidTy(c_),
                                         {ptr_, ptr_, i64, ptr_, i32, i32, i32,
                                          i32, i32, i32, i32, i32, ptr_, ptr_},
                                         false);
  Function* round =
      Function::Create(type, GlobalValue::InternalLinkage, name + ".round", m_);
  round->setAttributes(AttributeList::get(
      c_, bodies.front().second->getAttributes().getFnAttrs(), AttributeSet(),
      {}));
  round->removeFnAttr(Attribute::AlwaysInline);
  for (unsigned arg : {kRoundFrames, kRoundNext, kRoundBarrierCount})
    round->addParamAttr(arg, Attribute::NoAlias);

  BasicBlock* entry = BasicBlock::Create(c_, "entry", round);
  BasicBlock* exit = BasicBlock::Create(c_, "exit", round);
  ReturnInst::Create(c_, exit);
  IRBuilder<> b(entry);
  GlobalVariable* grid_state = m_.getGlobalVariable(kGridState);
  Value* state = b.CreateThreadLocalAddress(grid_state);
  Value* dims[3];
  for (int d = 0; d < 3; ++d)
    dims[d] =
        b.CreateLoad(i32, b.CreateConstInBoundsGEP1_64(
                              b.getInt8Ty(), state, kBlockDimOffset + 4 * d));
  SwitchInst* sw =
      b.CreateSwitch(round->getArg(kRoundRegion), exit, bodies.size());
  for (auto [region, body] : bodies)
    sw->addCase(b.getInt32(region), Loops(*round, *body, dims, exit));
  // The bodies into the loops.
  SmallVector<CallInst*, 16> calls;
  for (Instruction& i : instructions(*round))
    if (auto* call = dyn_cast<CallInst>(&i);
        call != nullptr && call->getCalledFunction() != nullptr &&
        any_of(bodies, [&](auto& body) {
          return body.second == call->getCalledFunction();
        }))
      calls.push_back(call);
  for (CallInst* call : calls) {
    InlineFunctionInfo info;
    if (!InlineFunction(*call, info).isSuccess()) {
      round->eraseFromParent();
      return nullptr;
    }
  }

  HoistInvariants(*round);
  FunctionPassManager fpm;
  fpm.addPass(SROAPass(SROAOptions::ModifyCFG));
  fpm.addPass(EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(InstCombinePass());
  fpm.addPass(SimplifyCFGPass());
  fpm.addPass(GVNPass());
  fpm.addPass(createFunctionToLoopPassAdaptor(LICMPass(LICMOptions()),
                                              /*UseMemorySSA=*/true));
  // A region's branches on values common to the threads, out of the loop
  // over them, so that what is left vectorizes.
  fpm.addPass(createFunctionToLoopPassAdaptor(
      SimpleLoopUnswitchPass(/*NonTrivial=*/true), /*UseMemorySSA=*/true));
  fpm.addPass(InstCombinePass());
  fpm.addPass(SimplifyCFGPass());
  fpm.run(*round, fam_);
  return round;
}

GlobalVariable* Looper::Make(StringRef name) {
  Function* ramp = m_.getFunction(name);
  Function* resume = m_.getFunction((name + ".resume").str());
  StructType* frame = StructType::getTypeByName(c_, (name + ".Frame").str());
  if (ramp == nullptr || resume == nullptr || frame == nullptr ||
      m_.getGlobalVariable(kGridState) == nullptr || !frames_.Lay(frame, dl_) ||
      !FindRegions(*ramp, *resume) || !FindContext(*ramp))
    return nullptr;
  FindUniform(*ramp, *resume);
  Type* i32 = Type::getInt32Ty(c_);
  Type* i64 = Type::getInt64Ty(c_);
  body_type_ = FunctionType::get(
      Type::getVoidTy(c_),
      {ptr_, ptr_, i64, i64, i32, i32, i32, i32, ptr_, ptr_, ptr_, ptr_, ptr_},
      false);

  SmallVector<std::pair<uint8_t, Function*>, 16> bodies;
  auto clean = [&] {
    for (auto& [region, body] : bodies)
      if (body != nullptr) body->eraseFromParent();
  };
  bodies.push_back({KC_LOOP_START, Body(*ramp, std::nullopt)});
  for (uint64_t region : regions_)
    bodies.push_back({uint8_t(region), Body(*resume, region)});
  if (any_of(bodies, [](auto& b) { return b.second == nullptr; })) {
    clean();
    return nullptr;
  }
  Function* round = Round(name, bodies);
  clean();
  if (round == nullptr) return nullptr;

  // On x86-64, a copy for the processors of x86-64-v3 too, which the
  // executor runs where the processor has them.
  Function* v3 = round;
  if (Triple(m_.getTargetTriple()).getArch() == Triple::x86_64) {
    ValueToValueMapTy map;
    v3 = CloneFunction(round, map);
    v3->setName(round->getName() + ".x86_64_v3");
    v3->addFnAttr("target-cpu", "x86-64-v3");
    v3->addFnAttr("target-features", kV3Features);
  }
  // Each region's barrier, by the name the kernel called it with; null
  // for a warp collective's.
  SmallVector<Constant*, 16> names(
      regions_.empty()
          ? 0
          : *std::max_element(regions_.begin(), regions_.end()) + 1,
      ConstantPointerNull::get(ptr_));
  for (auto [region, name] : barriers_) names[region] = name;
  ArrayType* names_type = ArrayType::get(ptr_, names.size());
  GlobalVariable* barriers =
      Global(name + ".barriers", ConstantArray::get(names_type, names));
  StructType* loops_type =
      StructType::get(c_, {i64, ptr_, ptr_, Type::getInt32Ty(c_), ptr_});
  return Global(
      name + ".loops",
      ConstantStruct::get(
          loops_type,
          {ConstantInt::get(i64, frames_.bytes()), round, v3,
           ConstantInt::get(Type::getInt32Ty(c_), names.size()), barriers}));
}

GlobalVariable* Looper::Global(const Twine& name, Constant* value) {
  // Made by the module: GCC takes a GlobalVariable that `new` makes here
  // for one freed with a mismatched operator delete.
  auto* global =
      cast<GlobalVariable>(m_.getOrInsertGlobal(name.str(), value->getType()));
  global->setConstant(true);
  global->setLinkage(GlobalValue::InternalLinkage);
  global->setInitializer(value);
  return global;
}

// Moves to the entry of `round` the loads that Invariants found to read
// memory that does not change while a block runs, with their addresses
// (made of the round's context and of other such loads): LLVM cannot see
// that the kernel's stores leave that memory alone.
void HoistInvariants(Function& round) {
  Instruction* entry = &*round.getEntryBlock().getFirstInsertionPt();
  DenseMap<Value*, Value*> hoisted;
  // The copy of `v` at the entry, or null if it cannot be made there.
  std::function<Value*(Value*)> at_entry = [&](Value* v) -> Value* {
    if (isa<Constant>(v) || isa<Argument>(v)) return v;
    auto* i = dyn_cast<Instruction>(v);
    if (i == nullptr) return nullptr;
    if (auto it = hoisted.find(i); it != hoisted.end()) return it->second;
    const bool movable =
        (isa<LoadInst>(i) && i->hasMetadata(kInvariantMetadata)) ||
        isa<GetElementPtrInst>(i) || isa<CastInst>(i) ||
        (isa<IntrinsicInst>(i) && cast<IntrinsicInst>(i)->getIntrinsicID() ==
                                      Intrinsic::threadlocal_address);
    if (!movable) return nullptr;
    SmallVector<Value*, 4> ops;
    for (Value* op : i->operands()) {
      Value* moved = at_entry(op);
      if (moved == nullptr) return nullptr;
      ops.push_back(moved);
    }
    Instruction* copy = i->clone();
    for (unsigned k = 0; k < ops.size(); ++k) copy->setOperand(k, ops[k]);
    copy->insertBefore(entry);
    hoisted[i] = copy;
    return copy;
  };
  SmallVector<LoadInst*, 32> loads;
  for (Instruction& i : instructions(round))
    if (auto* load = dyn_cast<LoadInst>(&i);
        load != nullptr && load->hasMetadata(kInvariantMetadata) &&
        load->getParent() != &round.getEntryBlock())
      loads.push_back(load);
  for (LoadInst* load : loads)
    if (Value* copy = at_entry(load)) load->replaceAllUsesWith(copy);
  for (LoadInst* load : loads)
    if (load->use_empty()) load->eraseFromParent();
}

// Erases those of `functions` that nothing uses, or that only the others
// erased used.
void EraseUnused(SmallVector<Function*, 8> functions) {
  for (bool erased = true; erased;) {
    erased = false;
    for (Function*& f : functions) {
      if (f == nullptr || !f->use_empty()) continue;
      f->eraseFromParent();
      f = nullptr;
      erased = true;
    }
  }
}

}  // namespace

void RematerializeInvariants(Function& coroutine) {
  Invariants invariants(coroutine);
  SmallVector<Instruction*, 256> users;
  for (Instruction& i : instructions(coroutine)) users.push_back(&i);
  SmallVector<WeakTrackingVH, 64> copied;
  for (Instruction* u : users) {
    // An invariant is copied where its users are.
    if (invariants.Is(u)) continue;
    for (Use& use : u->operands()) {
      auto* v = dyn_cast<Instruction>(use.get());
      if (v == nullptr || !invariants.Is(v)) continue;
      auto* phi = dyn_cast<PHINode>(u);
      BasicBlock* at =
          phi != nullptr ? phi->getIncomingBlock(use) : u->getParent();
      SmallPtrSet<Value*, 16> seen;
      if (!invariants.Outside(v, at, seen)) continue;
      DenseMap<Value*, Value*> done;
      int budget = 32;
      Instruction* before = phi != nullptr ? at->getTerminator() : u;
      if (Value* copy = invariants.Copy(v, before, done, budget)) {
        use.set(copy);
        copied.push_back(v);
      }
    }
  }
  for (WeakTrackingVH& v : copied)
    if (v != nullptr) RecursivelyDeleteTriviallyDeadInstructions(v);
}

void MarkUniform(Function& coroutine) {
  const DataLayout& dl = coroutine.getParent()->getDataLayout();
  Invariants invariants(coroutine);
  DominatorTree dominators(coroutine);
  LoopInfo loops(dominators);
  SmallVector<const BasicBlock*, 64> order;
  for (const BasicBlock* b : ReversePostOrderTraversal<Function*>(&coroutine))
    order.push_back(b);
  // Optimistically uniform; what may differ between threads spreads.
  DenseSet<const Value*> divergent;
  DenseSet<const BasicBlock*> joins;
  DenseSet<const Instruction*> split;  // divergent branches whose joins are in
  auto differs = [&](const Value* v) { return divergent.contains(v); };
  // Whether `i` may differ between threads whatever its operands.
  auto source = [&](Instruction& i) {
    if (isa<PHINode>(i) || isa<BinaryOperator>(i) || isa<CastInst>(i) ||
        isa<CmpInst>(i) || isa<SelectInst>(i) || isa<GetElementPtrInst>(i) ||
        isa<FreezeInst>(i) || isa<ExtractValueInst>(i) ||
        isa<InsertValueInst>(i) || isa<BranchInst>(i) || isa<SwitchInst>(i))
      return false;
    if (auto* load = dyn_cast<LoadInst>(&i)) {
      int64_t offset = 0;
      // threadIdx, and memory that threads may write
      if (IsGridState(Base(load->getPointerOperand(), dl, offset)) &&
          offset < kBlockIdxOffset)
        return true;
      return !invariants.Is(load);
    }
    if (auto* call = dyn_cast<CallInst>(&i)) {
      // A suspension resumes every thread alike; barriers' counts are the
      // block's.
      if (auto* intrinsic = dyn_cast<IntrinsicInst>(call))
        return intrinsic->getIntrinsicID() != Intrinsic::coro_suspend &&
               !intrinsic->doesNotAccessMemory();
      const Function* callee = call->getCalledFunction();
      return callee == nullptr || (callee->getName() != kBarrierArrive &&
                                   callee->getName() != kBarrierResult &&
                                   callee->getName() != kWarpArrive);
    }
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Instruction& i : instructions(coroutine)) {
      if (differs(&i)) continue;
      const bool is =
          source(i) || (isa<PHINode>(i) && joins.contains(i.getParent())) ||
          any_of(i.operands(), [&](Value* op) { return differs(op); });
      if (!is) continue;
      divergent.insert(&i);
      changed = true;
      if (!i.isTerminator() || i.getNumSuccessors() < 2 ||
          !split.insert(&i).second)
        continue;
      // Where threads that took different ways from it meet again: a
      // block reached from two of its successors by ways that meet
      // nowhere before (a label per way, propagated to a fixed point).
      const BasicBlock* from = i.getParent();
      DenseMap<const BasicBlock*, const BasicBlock*> way;
      for (unsigned k = 0; k < i.getNumSuccessors(); ++k)
        way[i.getSuccessor(k)] = i.getSuccessor(k);
      for (bool moved = true; moved;) {
        moved = false;
        for (const BasicBlock* b : order) {
          if (b == from) continue;
          const BasicBlock* label = nullptr;
          bool meet = false;
          for (const BasicBlock* pred : predecessors(b)) {
            if (pred == from) {
              meet = meet || (label != nullptr && label != b);
              label = b;
              continue;
            }
            auto it = way.find(pred);
            if (it == way.end()) continue;
            meet = meet || (label != nullptr && label != it->second);
            label = it->second;
          }
          if (label == nullptr) continue;
          auto [it, added] = way.try_emplace(b, meet ? b : label);
          // A block whose way changes is taken for a meeting point too:
          // more than needed, never less.
          if (!added && it->second != (meet ? b : label)) meet = true;
          if (meet && it->second != b) {
            it->second = b;
            added = true;
          }
          if (meet && joins.insert(b).second) added = true;
          moved = moved || added;
        }
      }
      // Loops that threads leave after different numbers of iterations:
      // what they compute differs after them.
      for (const Loop* loop = loops.getLoopFor(from); loop != nullptr;
           loop = loop->getParentLoop()) {
        const bool leaves = any_of(successors(from), [&](const BasicBlock* b) {
          return !loop->contains(b);
        });
        if (!leaves) break;
        for (BasicBlock* b : loop->blocks())
          for (Instruction& inside : *b) divergent.insert(&inside);
      }
    }
  }
  MDNode* mark = MDNode::get(coroutine.getContext(), {});
  for (Instruction& i : instructions(coroutine))
    if (!i.getType()->isVoidTy() && !differs(&i))
      i.setMetadata(kUniformMetadata, mark);
  for (Instruction& i : instructions(coroutine)) {
    auto* load = dyn_cast<LoadInst>(&i);
    int64_t offset = 0;
    if (load != nullptr && invariants.Is(load) &&
        !(IsGridState(Base(load->getPointerOperand(), dl, offset)) &&
          offset < kBlockIdxOffset))
      load->setMetadata(kInvariantMetadata, mark);
  }
}

PreservedAnalyses ThreadLoopsPass::run(Module& m, ModuleAnalysisManager& mam) {
  Function* run_barrier_blocks = m.getFunction(kRunBarrierBlocks);
  Function* run_resumable_blocks = m.getFunction(kRunResumableBlocks);
  if (run_barrier_blocks == nullptr && run_resumable_blocks == nullptr)
    return PreservedAnalyses::all();
  FunctionAnalysisManager& fam =
      mam.getResult<FunctionAnalysisManagerModuleProxy>(m).getManager();
  SmallVector<Function*, 4> steps;
  for (Function& f : m)
    if (f.hasFnAttribute(kLoopsAttribute)) steps.push_back(&f);
  bool changed = false;
  for (Function* step : steps) {
    SmallVector<CallBase*, 2> calls;
    bool only_runs = true;
    for (User* u : step->users()) {
      auto* call = dyn_cast<CallBase>(u);
      if (call == nullptr || call->getCalledFunction() == nullptr ||
          (call->getCalledFunction() != run_barrier_blocks &&
           call->getCalledFunction() != run_resumable_blocks) ||
          call->getArgOperand(3) != step)
        only_runs = false;
      else
        calls.push_back(call);
    }
    if (!only_runs || calls.empty()) continue;
    const std::string name =
        step->getFnAttribute(kStepAttribute).getValueAsString().str();
    Looper looper(m, fam);
    GlobalVariable* loops = looper.Make(name);
    if (loops == nullptr) continue;
    FunctionCallee run = m.getOrInsertFunction(
        kRunThreadLoops, calls.front()->getFunctionType());
    for (CallBase* call : calls) {
      call->setCalledFunction(run);
      call->setArgOperand(3, loops);
    }
    EraseUnused({step, m.getFunction(name), m.getFunction(name + ".resume"),
                 m.getFunction(name + ".destroy"),
                 m.getFunction(name + ".cleanup")});
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

}  // namespace kernelc::backends

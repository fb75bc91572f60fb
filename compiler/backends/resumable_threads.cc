#include "compiler/backends/resumable_threads.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Coroutines/CoroCleanup.h>
#include <llvm/Transforms/Coroutines/CoroConditionalWrapper.h>
#include <llvm/Transforms/Coroutines/CoroEarly.h>
#include <llvm/Transforms/Coroutines/CoroSplit.h>

#include <map>

#include "compiler/backends/executor_names.h"
#include "compiler/backends/thread_loops.h"
#include "kernelc/launch.h"

// How a thread of a block kernel runs on the CPU
// ----------------------------------------------
// kernelc/cpu_exec.h runs the threads of a block under an executor that
// interleaves them at barriers and warp functions. Given a plain function,
// it runs each thread as a fiber, with a stack of its own. Given a
// resumable one, which this file makes, it runs each thread as an LLVM
// coroutine: the function returns to the executor where the thread would
// wait, and is resumed there later. What the thread needs after the wait
// lives in its coroutine frame, laid out by LLVM (CoroSplit): the values
// live across the wait, not a whole stack. A switch is then a return and an
// indirect call, with no stack to change.
//
// Each call of kernelc/block.h's executor functions in the thread function
// becomes an arrival, a suspension if the arrival says so, and, after it,
// the collection of the result:
//
//   BlockBarrier:   BarrierArrive, suspend if it says so, BarrierResult
//   WarpCall:       WarpArrive, suspend if it says so, a copy of the result
//   WarpActiveMask: ActiveMaskArrive, suspend, ActiveMaskResult
//   BlockYield:     YieldArrive, suspend if it says so
//   BlockFail:      FailArrive, suspend (never to be resumed)
//
// and each return of the thread a final suspension, after which the
// frame's resume pointer is null (the switched-resume ABI): the executor
// reads that as the thread's end. The executor calls the thread through a
// function made here with the C calling convention (the resume functions
// have LLVM's fastcc), `int32_t step(const void* context, void** frame)`:
// with *frame null it starts the thread, whose frame comes from the
// executor (kc_host_thread_frame), else it resumes it by a direct call of
// the resume function; it returns a KC_STEP_ status (kernelc/launch.h). A
// thread whose waits are all barriers (or BlockFail) is run by
// kc_host_run_barrier_blocks, which runs blocks in rounds, unless
// thread_loops.cc makes loops of it (kc_host_run_thread_loops); any other
// by kc_host_run_resumable_blocks.

namespace kernelc::backends {

namespace {

using namespace llvm;

// kc::host's functions in kernelc/block.h and kernelc/cpu_exec.h, as
// Clang mangles them (runtime/src/block_exec.cc defines them).
constexpr const char* kRunBlocks =
    "_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_";
constexpr const char* kBlockBarrier = "_ZN2kc4host12BlockBarrierEPvPKci";
constexpr const char* kWarpCall =
    "_ZN2kc4host8WarpCallEPvRKNS0_11WarpRequestEPKvS1_j";
constexpr const char* kWarpActiveMask = "_ZN2kc4host14WarpActiveMaskEPvPKcjj";
constexpr const char* kBlockYield = "_ZN2kc4host10BlockYieldEPv";
constexpr const char* kBlockFail = "_ZN2kc4host9BlockFailEPvPKc";
constexpr const char* kWaits[] = {kBlockBarrier, kWarpCall, kWarpActiveMask,
                                  kBlockYield, kBlockFail};

bool Waits(const Function* f) {
  for (const char* name : kWaits)
    if (f->getName() == name) return true;
  return false;
}

// Adds to `set` the functions that call one of `work`, directly or through
// others.
void AddCallers(SmallVector<Function*, 16> work,
                SmallPtrSet<Function*, 16>& set) {
  while (!work.empty()) {
    Function* f = work.pop_back_val();
    for (User* u : f->users()) {
      auto* call = dyn_cast<CallBase>(u);
      if (call == nullptr || call->getCalledFunction() != f) continue;
      Function* caller = call->getFunction();
      if (set.insert(caller).second) work.push_back(caller);
    }
  }
}

// The functions of `m` that wait: the executor's.
SmallVector<Function*, 16> WaitFunctions(Module& m) {
  SmallVector<Function*, 16> waits;
  for (const char* name : kWaits)
    if (Function* f = m.getFunction(name)) waits.push_back(f);
  return waits;
}

// The functions of `m` that call, directly or through others, a function
// that waits.
SmallPtrSet<Function*, 16> ReachWaits(Module& m) {
  SmallPtrSet<Function*, 16> reach;
  AddCallers(WaitFunctions(m), reach);
  return reach;
}

// Marks what reaches a wait always_inline, so that it ends up in the
// thread function.
struct InlineWaitsPass : PassInfoMixin<InlineWaitsPass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager&) {
    bool changed = false;
    for (Function* f : ReachWaits(m)) {
      if (f->isDeclaration() || f->hasFnAttribute(Attribute::NoInline) ||
          f->hasFnAttribute(Attribute::AlwaysInline))
        continue;
      f->addFnAttr(Attribute::AlwaysInline);
      changed = true;
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

// Whether a call of `callee`, defined elsewhere, cannot wait: an
// intrinsic, a function of the C library (which calls back into no
// kernel), or the executor's own.
bool CannotWait(Function& callee, FunctionAnalysisManager& fam) {
  if (callee.isIntrinsic() || callee.getName().starts_with("kc_host_"))
    return true;
  if (Waits(&callee)) return false;
  LibFunc known;
  return callee.hasFnAttribute(Attribute::NoCallback) ||
         fam.getResult<TargetLibraryAnalysis>(callee).getLibFunc(callee, known);
}

// Whether `call` may wait where this file cannot see: an indirect call, an
// invoke, a call of a function that returns twice or of one defined
// elsewhere that CannotWait does not know.
bool MayWaitUnseen(CallBase& call, FunctionAnalysisManager& fam) {
  if (call.isInlineAsm()) return false;
  if (isa<InvokeInst>(call) || isa<CallBrInst>(call)) return true;
  Function* callee = call.getCalledFunction();
  if (callee == nullptr || callee->hasFnAttribute(Attribute::ReturnsTwice))
    return true;
  return callee->isDeclaration() && !Waits(callee) && !CannotWait(*callee, fam);
}

// The functions of `m` that may wait other than by their own calls of the
// executor: those that call a function that waits or may, or make a call
// that MayWaitUnseen.
SmallPtrSet<Function*, 16> MayWaitInside(Module& m,
                                         FunctionAnalysisManager& fam) {
  SmallPtrSet<Function*, 16> may;
  SmallVector<Function*, 16> work;
  for (Function& f : m) {
    if (f.isDeclaration()) continue;
    for (Instruction& i : instructions(f)) {
      auto* call = dyn_cast<CallBase>(&i);
      if (call != nullptr && MayWaitUnseen(*call, fam)) {
        may.insert(&f);
        work.push_back(&f);
        break;
      }
    }
  }
  work.append(WaitFunctions(m));
  AddCallers(std::move(work), may);
  return may;
}

// Whether every wait of thread function `f` is its own call of the
// executor, none in a function it calls, and its frame can be laid out:
// every alloca is of a fixed size in the entry block (a switched-resume
// coroutine cannot keep one of a size known only as it runs).
bool WaitsInItself(Function& f, const SmallPtrSet<Function*, 16>& may,
                   FunctionAnalysisManager& fam) {
  if (f.isDeclaration() || f.arg_size() != 1 || !f.getReturnType()->isVoidTy())
    return false;
  for (Instruction& i : instructions(f)) {
    if (auto* a = dyn_cast<AllocaInst>(&i);
        a != nullptr && !a->isStaticAlloca())
      return false;
    auto* call = dyn_cast<CallBase>(&i);
    if (call == nullptr) continue;
    if (MayWaitUnseen(*call, fam)) return false;
    if (Function* callee = call->getCalledFunction();
        callee != nullptr && !Waits(callee) && may.contains(callee))
      return false;
  }
  return true;
}

class Resumer {
 public:
  explicit Resumer(Module& m)
      : m_(m), c_(m.getContext()), ptr_(PointerType::getUnqual(c_)) {}

  // Makes `thread` (void(ptr)) resumable; returns its step function.
  Function* Make(Function& thread);
  // Whether the thread Make made last waits at barriers only (or fails):
  // its blocks can run in rounds (kc_host_run_barrier_blocks).
  bool barriers_only() const { return barriers_only_; }

 private:
  // The step function of coro_, made of `thread`, that the executor calls.
  Function* MakeStep(Function& thread);
  FunctionCallee Runtime(const char* name, Type* result,
                         ArrayRef<Type*> params) {
    return m_.getOrInsertFunction(name,
                                  FunctionType::get(result, params, false));
  }
  // Calls `arrive` before `wait`, and suspends there if its i1 result (or,
  // when `always`, unconditionally) says so. `wait` is left where the
  // thread goes on, for the caller to replace.
  void Suspend(CallBase* wait, FunctionCallee arrive,
               ArrayRef<Value*> arrive_args, bool always);
  // Replaces `wait` with `value` (if any).
  static void Replace(CallBase* wait, Value* value);
  // The suspension at `at` (a final one if `final`), whose resumption goes
  // to `resume`.
  void EmitSuspend(IRBuilder<>& b, bool final, BasicBlock* resume);

  Module& m_;
  LLVMContext& c_;
  PointerType* ptr_;
  Function* coro_ = nullptr;
  BasicBlock* start_ = nullptr;    // the allocas and the frame's allocation
  BasicBlock* end_ = nullptr;      // coro.end and the return of the handle
  BasicBlock* cleanup_ = nullptr;  // destruction: nothing to free
  bool barriers_only_ = false;
  // Whether its waits are barriers and warp collectives only: it may run
  // as loops (thread_loops.h).
  bool loops_ = false;
};

void Resumer::EmitSuspend(IRBuilder<>& b, bool final, BasicBlock* resume) {
  Function* suspend = Intrinsic::getDeclaration(&m_, Intrinsic::coro_suspend);
  Value* s =
      b.CreateCall(suspend, {ConstantTokenNone::get(c_), b.getInt1(final)});
  SwitchInst* sw = b.CreateSwitch(s, end_, 2);
  sw->addCase(b.getInt8(0), resume);
  sw->addCase(b.getInt8(1), cleanup_);
}

void Resumer::Suspend(CallBase* wait, FunctionCallee arrive,
                      ArrayRef<Value*> arrive_args, bool always) {
  BasicBlock* head = wait->getParent();
  BasicBlock* tail = head->splitBasicBlock(wait, "kc.resumed");
  head->getTerminator()->eraseFromParent();
  BasicBlock* wait_bb = BasicBlock::Create(c_, "kc.wait", coro_, tail);
  IRBuilder<> b(head);
  Value* must = b.CreateCall(arrive, arrive_args);
  if (always)
    b.CreateBr(wait_bb);
  else
    b.CreateCondBr(must, wait_bb, tail);
  b.SetInsertPoint(wait_bb);
  EmitSuspend(b, false, tail);
}

void Resumer::Replace(CallBase* wait, Value* value) {
  if (!wait->getType()->isVoidTy()) wait->replaceAllUsesWith(value);
  wait->eraseFromParent();
}

Function* Resumer::Make(Function& thread) {
  Type* i1 = Type::getInt1Ty(c_);
  Type* i32 = Type::getInt32Ty(c_);
  Type* i64 = Type::getInt64Ty(c_);

  // The coroutine: the thread's body, returning its frame.
  coro_ = Function::Create(FunctionType::get(ptr_, {ptr_}, false),
                           GlobalValue::InternalLinkage,
                           thread.getName() + ".resumable", m_);
  coro_->setAttributes(AttributeList::get(
      c_, thread.getAttributes().getFnAttrs(), AttributeSet(), {}));
  coro_->removeFnAttr(Attribute::AlwaysInline);
  coro_->addFnAttr(Attribute::NoInline);
  coro_->addFnAttr(Attribute::PresplitCoroutine);
  coro_->splice(coro_->begin(), &thread);
  thread.getArg(0)->replaceAllUsesWith(coro_->getArg(0));
  BasicBlock* body = &coro_->getEntryBlock();
  SmallVector<AllocaInst*, 8> allocas;
  for (Instruction& i : *body)
    if (auto* a = dyn_cast<AllocaInst>(&i); a != nullptr && a->isStaticAlloca())
      allocas.push_back(a);

  // Its start: the allocas, and the frame from the executor.
  BasicBlock* entry = BasicBlock::Create(c_, "kc.start", coro_, body);
  start_ = entry;
  BasicBlock* begin = BasicBlock::Create(c_, "kc.begin", coro_, body);
  BasicBlock* no_memory = BasicBlock::Create(c_, "kc.no_memory", coro_, body);
  for (AllocaInst* a : allocas) a->moveBefore(*entry, entry->end());
  IRBuilder<> b(entry);
  Value* id = b.CreateCall(
      Intrinsic::getDeclaration(&m_, Intrinsic::coro_id),
      {b.getInt32(16), ConstantPointerNull::get(ptr_),
       ConstantPointerNull::get(ptr_), ConstantPointerNull::get(ptr_)});
  Value* size =
      b.CreateCall(Intrinsic::getDeclaration(&m_, Intrinsic::coro_size, {i64}));
  Value* memory = b.CreateCall(Runtime(kThreadFrame, ptr_, {i64}), {size});
  b.CreateCondBr(b.CreateIsNull(memory), no_memory, begin);
  b.SetInsertPoint(no_memory);
  b.CreateRet(ConstantPointerNull::get(ptr_));
  b.SetInsertPoint(begin);
  Value* handle = b.CreateCall(
      Intrinsic::getDeclaration(&m_, Intrinsic::coro_begin), {id, memory});
  b.CreateBr(body);

  end_ = BasicBlock::Create(c_, "kc.suspended", coro_);
  b.SetInsertPoint(end_);
  b.CreateCall(Intrinsic::getDeclaration(&m_, Intrinsic::coro_end),
               {handle, b.getFalse(), ConstantTokenNone::get(c_)});
  b.CreateRet(handle);
  cleanup_ = BasicBlock::Create(c_, "kc.cleanup", coro_);
  b.SetInsertPoint(cleanup_);
  b.CreateBr(end_);

  // The waits and the returns.
  SmallVector<CallBase*, 16> waits;
  SmallVector<ReturnInst*, 4> returns;
  for (Instruction& i : instructions(*coro_)) {
    if (auto* r = dyn_cast<ReturnInst>(&i);
        r != nullptr && r->getParent() != end_ && r->getParent() != no_memory)
      returns.push_back(r);
    auto* call = dyn_cast<CallBase>(&i);
    if (call != nullptr && call->getCalledFunction() != nullptr &&
        Waits(call->getCalledFunction()))
      waits.push_back(call);
  }
  barriers_only_ = true;
  loops_ = true;
  AllocaInst* result = nullptr;
  for (CallBase* w : waits) {
    const StringRef name = w->getCalledFunction()->getName();
    barriers_only_ =
        barriers_only_ && (name == kBlockBarrier || name == kBlockFail);
    loops_ = loops_ && (name == kBlockBarrier || name == kWarpCall);
    Value* e = w->getArgOperand(0);
    if (name == kBlockBarrier) {
      Suspend(w, Runtime(kBarrierArrive, i1, {ptr_, ptr_, i32}),
              {e, w->getArgOperand(1), w->getArgOperand(2)}, false);
      // Only a barrier whose count is used collects it: else the executor
      // would be kept in the frame across the wait, for nothing.
      b.SetInsertPoint(w);
      Replace(w, w->use_empty()
                     ? nullptr
                     : b.CreateCall(Runtime(kBarrierResult, i32, {ptr_}), {e}));
    } else if (name == kWarpCall) {
      // The arrival says where the lane's result will be; the thread
      // copies it from there once the collective is complete. One place
      // for every warp function's, in the frame (the arrival writes it).
      if (result == nullptr)
        result = new AllocaInst(ptr_, 0, "kc.result", start_->begin());
      Value* context = w->getArgOperand(2);
      Suspend(w, Runtime(kWarpArrive, i1, {ptr_, ptr_, ptr_, ptr_}),
              {e, w->getArgOperand(1), context, result}, false);
      b.SetInsertPoint(w);
      b.CreateMemCpy(w->getArgOperand(3), MaybeAlign(),
                     b.CreateLoad(ptr_, result), MaybeAlign(16),
                     b.CreateZExt(w->getArgOperand(4), i64));
      // The context (a reduction's operator) must outlive the suspension:
      // another lane may complete the collective with it. A use after it
      // keeps it in the frame, where a local would otherwise be left on
      // the stack of the call that suspends.
      if (!isa<Constant>(context))
        b.CreateCall(
            InlineAsm::get(FunctionType::get(b.getVoidTy(), {ptr_}, false), "",
                           "r", /*hasSideEffects=*/true),
            {context});
      Replace(w, nullptr);
    } else if (name == kWarpActiveMask) {
      Suspend(
          w, Runtime(kActiveMaskArrive, i1, {ptr_, ptr_, i32, i32}),
          {e, w->getArgOperand(1), w->getArgOperand(2), w->getArgOperand(3)},
          true);
      b.SetInsertPoint(w);
      Replace(w, b.CreateCall(Runtime(kActiveMaskResult, i32, {ptr_}), {e}));
    } else if (name == kBlockYield) {
      Suspend(w, Runtime(kYieldArrive, i1, {ptr_}), {e}, false);
      Replace(w, nullptr);
    } else {
      Suspend(w, Runtime(kFailArrive, i1, {ptr_, ptr_}),
              {e, w->getArgOperand(1)}, true);
      Replace(w, nullptr);
    }
  }
  BasicBlock* never = BasicBlock::Create(c_, "kc.after_return", coro_);
  new UnreachableInst(c_, never);
  for (ReturnInst* r : returns) {
    b.SetInsertPoint(r);
    EmitSuspend(b, true, never);
    r->eraseFromParent();
  }

  // Threads that wait at barriers and warp functions only may run as loops
  // (thread_loops.h).
  if (loops_) {
    RematerializeInvariants(*coro_);
    MarkUniform(*coro_);
  }
  Function* step = MakeStep(thread);
  if (loops_) step->addFnAttr(kLoopsAttribute);
  return step;
}

Function* Resumer::MakeStep(Function& thread) {
  Type* i32 = Type::getInt32Ty(c_);
  IRBuilder<> b(c_);
  Function* step = Function::Create(FunctionType::get(i32, {ptr_, ptr_}, false),
                                    GlobalValue::InternalLinkage,
                                    thread.getName() + ".step", m_);
  step->setAttributes(AttributeList::get(
      c_, thread.getAttributes().getFnAttrs(), AttributeSet(), {}));
  step->removeFnAttr(Attribute::AlwaysInline);
  step->addFnAttr(kStepAttribute, coro_->getName());
  BasicBlock* s_entry = BasicBlock::Create(c_, "entry", step);
  BasicBlock* s_start = BasicBlock::Create(c_, "start", step);
  BasicBlock* s_resume = BasicBlock::Create(c_, "resume", step);
  BasicBlock* s_started = BasicBlock::Create(c_, "started", step);
  BasicBlock* s_no_memory = BasicBlock::Create(c_, "no_memory", step);
  BasicBlock* s_done = BasicBlock::Create(c_, "done", step);
  Value* context = step->getArg(0);
  Value* slot = step->getArg(1);
  b.SetInsertPoint(s_entry);
  Value* frame = b.CreateLoad(ptr_, slot);
  b.CreateCondBr(b.CreateIsNull(frame), s_start, s_resume);
  b.SetInsertPoint(s_start);
  Value* started = b.CreateCall(coro_, {context});
  b.CreateStore(started, slot);
  b.CreateCondBr(b.CreateIsNull(started), s_no_memory, s_started);
  b.SetInsertPoint(s_no_memory);
  b.CreateRet(b.getInt32(KC_STEP_NO_FRAME));
  b.SetInsertPoint(s_started);
  b.CreateBr(s_done);
  b.SetInsertPoint(s_resume);
  b.CreateCall(Intrinsic::getDeclaration(&m_, Intrinsic::coro_resume), {frame});
  b.CreateBr(s_done);
  b.SetInsertPoint(s_done);
  PHINode* h = b.CreatePHI(ptr_, 2);
  h->addIncoming(started, s_started);
  h->addIncoming(frame, s_resume);
  Value* done =
      b.CreateCall(Intrinsic::getDeclaration(&m_, Intrinsic::coro_done), {h});
  b.CreateRet(b.CreateSelect(done, b.getInt32(KC_STEP_RETURNED),
                             b.getInt32(KC_STEP_WAITS)));
  return step;
}

struct ResumeThreadsPass : PassInfoMixin<ResumeThreadsPass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager& mam) {
    Function* run_blocks = m.getFunction(kRunBlocks);
    if (run_blocks == nullptr) return PreservedAnalyses::all();
    FunctionAnalysisManager& fam =
        mam.getResult<FunctionAnalysisManagerModuleProxy>(m).getManager();
    const SmallPtrSet<Function*, 16> may = MayWaitInside(m, fam);
    // The calls of RunBlocks with a thread function that qualifies, whose
    // only uses they are.
    std::map<Function*, SmallVector<CallBase*, 2>> threads;
    SmallPtrSet<Function*, 4> refused;
    for (User* u : run_blocks->users()) {
      auto* call = dyn_cast<CallBase>(u);
      if (call == nullptr || call->getCalledFunction() != run_blocks) continue;
      auto* thread =
          dyn_cast<Function>(call->getArgOperand(3)->stripPointerCasts());
      if (thread == nullptr) continue;
      if (!WaitsInItself(*thread, may, fam)) refused.insert(thread);
      threads[thread].push_back(call);
    }
    bool changed = false;
    Resumer resumer(m);
    for (auto& [thread, calls] : threads) {
      if (refused.contains(thread)) continue;
      if (thread->getNumUses() != calls.size()) continue;
      Function* step = resumer.Make(*thread);
      FunctionCallee run = m.getOrInsertFunction(
          resumer.barriers_only() ? kRunBarrierBlocks : kRunResumableBlocks,
          run_blocks->getFunctionType());
      for (CallBase* call : calls) {
        call->setCalledFunction(run);
        call->setArgOperand(3, step);
      }
      thread->eraseFromParent();
      changed = true;
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

// After CoroSplit: a step function resumes its coroutine by an indirect
// call of the frame's resume pointer. The step only resumes a thread that
// waits, never one that has returned, so that pointer is always the
// coroutine's resume function, and the call becomes a direct one. (Inlined
// into the step, it made the loops of a kernel's threads slower: the
// layernorm's by a fifth, where the matmul gained 4 %.)
struct DirectResumePass : PassInfoMixin<DirectResumePass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager&) {
    bool changed = false;
    for (Function& step : m) {
      const Attribute coro = step.getFnAttribute(kStepAttribute);
      if (!coro.isValid()) continue;
      Function* resume =
          m.getFunction((coro.getValueAsString() + ".resume").str());
      if (resume == nullptr) continue;
      for (Instruction& i : instructions(step)) {
        auto* call = dyn_cast<CallBase>(&i);
        if (call == nullptr || !call->isIndirectCall() || call->arg_size() != 1)
          continue;
        // The resume pointer is the first field of the frame called with.
        auto* load = dyn_cast<LoadInst>(call->getCalledOperand());
        if (load == nullptr || load->getPointerOperand()->stripPointerCasts() !=
                                   call->getArgOperand(0)->stripPointerCasts())
          continue;
        call->setCalledFunction(resume);
        changed = true;
      }
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

}  // namespace

void AddResumableThreads(PassBuilder& pb) {
  pb.registerPipelineStartEPCallback(
      [](ModulePassManager& mpm, OptimizationLevel) {
        mpm.addPass(InlineWaitsPass());
      });
  pb.registerOptimizerEarlyEPCallback(
      [](ModulePassManager& mpm, OptimizationLevel) {
        mpm.addPass(ResumeThreadsPass());
        ModulePassManager coro;
        coro.addPass(CoroEarlyPass());
        coro.addPass(createModuleToPostOrderCGSCCPassAdaptor(
            CoroSplitPass(/*OptimizeFrame=*/true)));
        coro.addPass(CoroCleanupPass());
        coro.addPass(DirectResumePass());
        coro.addPass(ThreadLoopsPass());
        mpm.addPass(CoroConditionalWrapper(std::move(coro)));
      });
}

}  // namespace kernelc::backends

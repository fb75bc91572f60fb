#include "compiler/backends/resumable_threads.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

namespace kernelc::backends {
namespace {

// Thread functions that wait at a barrier (BlockBarrier), each in its way;
// Optimized adds an entry per thread that hands it to RunBlocks, as
// kernelc/cpu_exec.h does.
constexpr const char* kModule = R"(
target triple = "x86_64-pc-linux-gnu"

@name = private constant [2 x i8] c"k\00"
@sync = private constant [14 x i8] c"__syncthreads\00"
@out = global i32 0

declare i32 @_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_(ptr, ptr, ptr, ptr, ptr)
declare i32 @_ZN2kc4host12BlockBarrierEPvPKci(ptr, ptr, i32)
declare void @_ZN2kc4host8WarpCallEPvRKNS0_11WarpRequestEPKvS1_j(ptr, ptr, ptr, ptr, i32)
declare float @expf(float)
declare i32 @puts(ptr)
declare void @numba_thread(ptr)

define internal i32 @barrier(ptr %e, i32 %v) {
  %r = call i32 @_ZN2kc4host12BlockBarrierEPvPKci(ptr %e, ptr @sync, i32 %v)
  ret i32 %r
}

define internal i32 @barrier_apart(ptr %e, i32 %v) noinline {
  %r = call i32 @_ZN2kc4host12BlockBarrierEPvPKci(ptr %e, ptr @sync, i32 %v)
  ret i32 %r
}

; Its barrier is in a helper, which is inlined; it calls the C library.
define internal void @inlined(ptr %ctx) {
  %e = load ptr, ptr %ctx
  %x = load float, ptr %ctx
  %y = call float @expf(float %x)
  %i = fptosi float %y to i32
  %r = call i32 @barrier(ptr %e, i32 %i)
  store i32 %r, ptr @out
  ret void
}

; It calls a warp function too.
define internal void @warp(ptr %ctx) {
  %e = load ptr, ptr %ctx
  %out = alloca i32
  call void @_ZN2kc4host8WarpCallEPvRKNS0_11WarpRequestEPKvS1_j(ptr %e, ptr %ctx, ptr null, ptr %out, i32 4)
  %v = load i32, ptr %out
  %r = call i32 @barrier(ptr %e, i32 %v)
  store i32 %r, ptr @out
  ret void
}

; Its barrier stays in a function that is not inlined.
define internal void @apart(ptr %ctx) {
  %e = load ptr, ptr %ctx
  %r = call i32 @barrier_apart(ptr %e, i32 1)
  store i32 %r, ptr @out
  ret void
}

; It calls a function defined elsewhere, which may wait (Numba's code).
define internal void @foreign(ptr %ctx) {
  %e = load ptr, ptr %ctx
  call void @numba_thread(ptr %ctx)
  %r = call i32 @barrier(ptr %e, i32 1)
  store i32 %r, ptr @out
  ret void
}

; Its array's size is known only as it runs.
define internal void @sized(ptr %ctx) {
  %e = load ptr, ptr %ctx
  %n = load i64, ptr %e
  %a = alloca i8, i64 %n
  store i8 0, ptr %a
  %r = call i32 @barrier(ptr %e, i32 1)
  %p = call i32 @puts(ptr %a)
  ret void
}

; It calls through a pointer.
define internal void @indirect(ptr %ctx) {
  %e = load ptr, ptr %ctx
  %f = load ptr, ptr %e
  call void %f(ptr %ctx)
  %r = call i32 @barrier(ptr %e, i32 1)
  store i32 %r, ptr @out
  ret void
}
)";

// The threads of kModule; entry_<thread> runs each.
constexpr const char* kThreads[] = {"inlined", "warp",  "apart",
                                    "foreign", "sized", "indirect"};

// kModule with an entry per thread of kThreads.
std::string WithEntries() {
  std::string text = kModule;
  for (const char* thread : kThreads)
    text += std::string("define i32 @entry_") + thread +
            "(ptr %r, ptr %err, ptr %ctx) {\n"
            "  %s = call i32 "
            "@_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_("
            "ptr %r, ptr @name, ptr %err, ptr @" +
            thread + ", ptr %ctx)\n  ret i32 %s\n}\n";
  return text;
}

// The module `text` after Clang's -O3 pipeline with the resumable threads'
// passes.
std::unique_ptr<llvm::Module> Optimized(llvm::LLVMContext& context,
                                        const std::string& text) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(text, error, context);
  REQUIRE(m != nullptr);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  AddResumableThreads(pb);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*m, mam);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  CHECK_FALSE(llvm::verifyModule(*m, &os));
  CHECK(problems.empty());
  return m;
}

// The function that `entry` runs its blocks with.
std::string Executor(const llvm::Module& m, const char* entry) {
  const llvm::Function* f = m.getFunction(entry);
  REQUIRE(f != nullptr);
  for (const llvm::Instruction& i : f->getEntryBlock())
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i))
      if (const llvm::Function* callee = call->getCalledFunction())
        return callee->getName().str();
  return "";
}

TEST_CASE("threads whose waits are their own become resumable") {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> m = Optimized(context, WithEntries());
  const std::string fibers =
      "_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_";
  // One that waits at barriers only runs in rounds.
  CHECK(Executor(*m, "entry_inlined") == "kc_host_run_barrier_blocks");
  CHECK(Executor(*m, "entry_warp") == "kc_host_run_resumable_blocks");
  CHECK(Executor(*m, "entry_apart") == fibers);
  CHECK(Executor(*m, "entry_foreign") == fibers);
  CHECK(Executor(*m, "entry_indirect") == fibers);
  CHECK(Executor(*m, "entry_sized") == fibers);
  // The resumable thread arrives at the barrier and suspends there; it
  // calls the fibers' barrier no more, and LLVM has split it.
  CHECK(m->getFunction("kc_host_barrier_arrive") != nullptr);
  CHECK(m->getFunction("kc_host_barrier_result") != nullptr);
  CHECK(m->getFunction("kc_host_thread_frame") != nullptr);
  CHECK(m->getFunction("inlined.resumable.resume") != nullptr);
  CHECK(m->getFunction("inlined") == nullptr);
  // Each step resumes its thread by a direct call: it calls
  // nothing through a pointer.
  for (const char* step : {"inlined.step", "warp.step"}) {
    const llvm::Function* f = m->getFunction(step);
    REQUIRE(f != nullptr);
    for (const llvm::Instruction& i : llvm::instructions(*f))
      if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i))
        CHECK_FALSE(call->isIndirectCall());
  }
  for (const char* thread : {"apart", "foreign", "indirect", "sized"})
    CHECK(m->getFunction(thread) != nullptr);
}

// A thread that waits at barriers only, with the built-in variables of
// kernelc/host.h: each thread writes its index to shared memory and, after
// the barrier, adds what the thread opposite wrote, into shared memory too.
constexpr const char* kLoopModule = R"(
target triple = "x86_64-pc-linux-gnu"

%GridState = type { [3 x i32], [3 x i32], [3 x i32], [3 x i32], ptr }
@_ZN2kc4host10grid_stateE = linkonce_odr thread_local global %GridState zeroinitializer, align 8
@tile = internal thread_local global [256 x float] zeroinitializer, align 16
@sums = internal thread_local global [256 x float] zeroinitializer, align 16
@name = private constant [2 x i8] c"k\00"
@sync = private constant [14 x i8] c"__syncthreads\00"

declare i32 @_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_(ptr, ptr, ptr, ptr, ptr)
declare i32 @_ZN2kc4host12BlockBarrierEPvPKci(ptr, ptr, i32)
declare ptr @llvm.threadlocal.address.p0(ptr)

define internal void @opposite(ptr %ctx) {
  %gs = call ptr @llvm.threadlocal.address.p0(ptr @_ZN2kc4host10grid_stateE)
  %e.at = getelementptr inbounds i8, ptr %gs, i64 48
  %e = load ptr, ptr %e.at
  %x = load i32, ptr %gs
  %xs = zext i32 %x to i64
  %v = uitofp i32 %x to float
  %tile = call ptr @llvm.threadlocal.address.p0(ptr @tile)
  %t = getelementptr inbounds float, ptr %tile, i64 %xs
  store float %v, ptr %t
  %r = call i32 @_ZN2kc4host12BlockBarrierEPvPKci(ptr %e, ptr @sync, i32 1)
  %j = sub i32 255, %x
  %js = zext i32 %j to i64
  %tile2 = call ptr @llvm.threadlocal.address.p0(ptr @tile)
  %u.at = getelementptr inbounds float, ptr %tile2, i64 %js
  %u = load float, ptr %u.at
  %w = fadd float %v, %u
  %sums = call ptr @llvm.threadlocal.address.p0(ptr @sums)
  %o = getelementptr inbounds float, ptr %sums, i64 %xs
  store float %w, ptr %o
  ret void
}

define i32 @entry_opposite(ptr %r, ptr %err, ptr %ctx) {
  %s = call i32 @_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_(ptr %r, ptr @name, ptr %err, ptr @opposite, ptr %ctx)
  ret i32 %s
}
)";

TEST_CASE("threads that wait at barriers only become vectorized loops") {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> m = Optimized(context, kLoopModule);
  CHECK(Executor(*m, "entry_opposite") == "kc_host_run_thread_loops");
  // The thread's coroutine and step are gone; its rounds remain, with the
  // barrier a round's end rather than a call of the executor.
  CHECK(m->getFunction("opposite.step") == nullptr);
  CHECK(m->getFunction("opposite.resumable.resume") == nullptr);
  CHECK(m->getFunction("kc_host_barrier_arrive") == nullptr);
  CHECK(m->getGlobalVariable("opposite.resumable.loops", true) != nullptr);
  for (const char* name :
       {"opposite.resumable.round", "opposite.resumable.round.x86_64_v3"}) {
    const llvm::Function* round = m->getFunction(name);
    REQUIRE(round != nullptr);
    // Each region is a loop over the threads, in vectors: the indices'
    // copies are stored and the opposite thread's read a vector at a time.
    bool vector_store = false;
    for (const llvm::Instruction& i : llvm::instructions(*round)) {
      if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&i))
        vector_store =
            vector_store || store->getValueOperand()->getType()->isVectorTy();
      if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i))
        CHECK_FALSE(call->isIndirectCall());
    }
    CHECK(vector_store);
  }
}

}  // namespace
}  // namespace kernelc::backends

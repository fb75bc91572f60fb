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

// The module after Clang's -O3 pipeline with the resumable threads' passes.
std::unique_ptr<llvm::Module> Optimized(llvm::LLVMContext& context) {
  std::string text = kModule;
  for (const char* thread : kThreads)
    text += std::string("define i32 @entry_") + thread +
            "(ptr %r, ptr %err, ptr %ctx) {\n"
            "  %s = call i32 "
            "@_ZN2kc4host9RunBlocksERK14kc_block_rangePKcP8kc_errorPFvPKvES9_("
            "ptr %r, ptr @name, ptr %err, ptr @" +
            thread + ", ptr %ctx)\n  ret i32 %s\n}\n";
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
  std::unique_ptr<llvm::Module> m = Optimized(context);
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

}  // namespace
}  // namespace kernelc::backends

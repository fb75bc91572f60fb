#ifndef KERNELC_COMPILER_BACKENDS_THREAD_LOOPS_H_
#define KERNELC_COMPILER_BACKENDS_THREAD_LOOPS_H_

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace kernelc::backends {

// The threads of a block as loops, for resumable threads that wait at
// barriers and warp functions only (resumable_threads.cc makes those).
//
// Between two waits the threads of a block run the same region of the
// kernel, from the wait where each stopped to its next one, and none
// depends on another's progress within it. The executor runs such threads
// in rounds: a round runs every thread that can go on (after a barrier,
// all; after a warp collective, the lanes of those it has completed) to
// its next wait. Here a round becomes a loop over the block's threads per
// region, compiled with the region inlined into it, so that LLVM optimizes
// the region across threads as it would a loop the kernel wrote: values
// common to the threads are computed once, and the loop vectorizes where
// the region allows (over threadIdx.x, innermost). A barrier's arrival
// adds the thread's predicate to the round's count; a warp function's
// leaves the lane's request where the executor finds it (kc_host_loop_wait,
// kernelc/cpu_exec.h), and the lane reads its result there in the next
// region.
//
// What a thread keeps across a barrier stays in its coroutine frame, as
// CoroSplit laid it out, only with each field's copies for all the threads
// side by side (the threads' frames as a structure of arrays): thread t's
// copy of a field of `stride` bytes is at field_base + t * stride, so that
// a field read in a loop over t is read in vectors.
//
// Before CoroSplit, RematerializeInvariants recomputes, at each use, the
// values that are the same wherever the thread computes them: the kernel's
// arguments (read from the thread's context), the built-in variables of
// kernelc/host.h and the addresses of thread-local variables (__shared__
// memory), and pure arithmetic on those. They then stay out of the frame:
// after the split, a thread's index becomes the loop's, and a block's
// shared values are computed once per round rather than loaded for each
// thread.
//
// MarkUniform then marks what every thread at a barrier holds alike (a
// loop counter over tiles): a field that only ever holds such values is
// read once per round, from the first thread at the region, so that the
// loop sees it as invariant, its addresses affine in threadIdx.x and its
// branches on it out of the loop (loop unswitching). The loads of the
// kernel's arguments and of blockIdx and blockDim move before the loops.
//
// After CoroSplit, ThreadLoopsPass replaces each call of
// kc_host_run_barrier_blocks or kc_host_run_resumable_blocks whose step
// function Resumer marked
// (kLoopsAttribute) with one of kc_host_run_thread_loops
// (kernelc/cpu_exec.h), with a kc_host_thread_loops that names the round
// function it makes, and its copy for x86-64-v3. A thread whose frame it
// cannot lay out again (a use of the frame it does not know, a field
// aligned to more than 16 bytes) keeps its step function. A call of a
// function of the kernel's own, which may read threadIdx, gets it in
// grid_state, as the executor sets it for a thread it steps.

// Recomputes at each use, in `coroutine` (a thread function made into a
// coroutine, not yet split, whose argument is the thread's context), the
// values that are the same wherever the thread computes them.
void RematerializeInvariants(llvm::Function& coroutine);
// Marks the values of `coroutine` that are the same in every thread of a
// block that computes them at the same point between the same barriers:
// computed from the kernel's arguments, blockIdx, blockDim and gridDim
// only, outside branches and loops whose way threadIdx, or memory, may
// decide.
void MarkUniform(llvm::Function& coroutine);

struct ThreadLoopsPass : llvm::PassInfoMixin<ThreadLoopsPass> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&);
};

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_THREAD_LOOPS_H_

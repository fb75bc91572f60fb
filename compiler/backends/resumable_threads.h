#ifndef KERNELC_COMPILER_BACKENDS_RESUMABLE_THREADS_H_
#define KERNELC_COMPILER_BACKENDS_RESUMABLE_THREADS_H_

namespace llvm {
class PassBuilder;
}  // namespace llvm

namespace kernelc::backends {

// Adds to `pb`'s pipeline the passes that compile the threads of block
// kernels for the CPU as resumable functions (LLVM's switched-resume
// coroutines) instead of fibers:
//
//  - at the start, every function that reaches a barrier or warp function
//    of kernelc/block.h is marked always_inline, so that each kernel's
//    thread function holds them all;
//  - before the optimizer's last passes, each thread function handed to
//    kc::host::RunBlocks whose barriers all lie in itself becomes a
//    coroutine that suspends where it would wait, and the call becomes one
//    of kc_host_run_resumable_blocks, or of kc_host_run_barrier_blocks where
//    it waits at barriers only (kernelc/cpu_exec.h);
//  - after CoroSplit, each step function calls its thread's resume
//    function directly rather than through the frame;
//  - a thread that waits at barriers and warp functions only becomes
//    loops over a block's threads, one per region between its waits, and
//    its call one of kc_host_run_thread_loops (thread_loops.h).
//
// A thread function where a wait may lie out of sight (in a function left
// out of line, behind an indirect call, in a function defined elsewhere
// that is not the C library's) or with an alloca of a size known only as
// it runs keeps its fibers.
void AddResumableThreads(llvm::PassBuilder& pb);

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_RESUMABLE_THREADS_H_

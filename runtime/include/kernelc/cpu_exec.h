// Running a launch of a __global__ kernel on the CPU: the functions that a
// generated library's CPU entry points call, compiled with the kernel source
// (__KERNELC_HOST__).
//
// How the CPU runs a grid
// -----------------------
// The handler splits a launch into ranges of blocks (kernelc/grid_split.h)
// and runs them on XLA's intra-op thread pool, the calling thread included:
// the blocks of a grid run in parallel, each block on one OS thread. A grid
// of little work stays on the calling thread. Each kernel runs its range in
// one of two ways:
//
//  - A kernel that uses no block-level feature runs in nested loops over the
//    blocks of the range and the threads of each block, with the kernel
//    inlined into the innermost loop so that it vectorizes
//    (RunThreadLoop).
//  - A kernel that uses __shared__, barriers, warp intrinsics or cooperative
//    groups runs under the block executor (RunBlocks). Each thread of a
//    block is a fiber: a stack of its own and a saved set of registers
//    (Boost.Context's make_fcontext/ontop_fcontext, whose switch saves the
//    callee-saved registers and the stack pointer). Where kernelc compiles
//    the kernel with its own Clang, it makes the thread a resumable function
//    instead wherever it can (kc_host_run_resumable_blocks, below), and
//    one that waits at barriers and warp functions only a loop over the
//    block's threads per region between its waits
//    (kc_host_run_thread_loops): the rules are the same, only a switch is
//    cheaper, or, in loops, gone. A block's threads run on the OS thread
//    that runs the block, one at a time, starting in thread order. A thread
//    runs until it calls a barrier or a warp function, or returns; then the
//    next thread that can go on runs. A barrier completes when every thread of
//    the block that has not returned has called one, a warp function when every
//    lane its mask names that has not returned has made the same call (as on
//    GPUs since Volta: a thread that returns early leaves the barriers to the
//    others); the thread that completes it computes the results, makes the
//    waiting threads ready and goes on. The kernel's code runs unchanged,
//    barriers may sit anywhere (in loops, branches, helper functions), and a
//    switch costs some 10 to 15 nanoseconds, where an OS thread per CUDA thread
//    would cost a kernel context switch and 1024 threads per block.
//
// Threads switch only in those calls: a thread that spins waiting for
// another thread of its block without calling one never lets it run (a
// polling loop with __nanosleep does, which yields on the CPU). Threads of
// different blocks run on different OS threads, and are ordered as CUDA
// orders them: by atomics and fences.
//
// What the executor reports (RunBlocks returns non-zero; the message names
// the kernel, the block and the threads involved), where CUDA's behaviour is
// undefined or the GPU would hang:
//  - a barrier or warp function that cannot complete: threads that wait
//    for each other (a barrier reached while a lane that a waiting warp
//    function names waits at the barrier, lanes whose masks or calls
//    disagree), the GPU's hang;
//  - a warp function whose mask does not name the calling lane;
//  - a block of more than kMaxBlockThreads (1024) threads, and dynamic
//    shared memory over kMaxDynamicSharedBytes (227 KiB).
// The block's remaining threads are abandoned where they wait (their stacks
// are reused, destructors of their locals do not run), and so is the rest
// of the range.
//
// Memory: each OS thread that runs blocks keeps, for the largest block it
// has run, one stack of kFiberStackBytes (64 KiB) per thread with a guard
// page below it, so that an overflow faults rather than corrupting another
// thread's stack, and about 3 KiB of state per warp. The stacks are
// reserved address space: only the pages a thread touches are committed, so
// a 1024-thread block reserves 72 MiB and, for a kernel with small frames,
// commits about 4 MiB (bench/cpu_blocks). Resumable threads have no stacks:
// a frame each, of the size LLVM lays out (a few hundred bytes), side by
// side, for the largest block the OS thread has run. Each stack is two memory
// mappings: with Linux's default vm.max_map_count of 65530, some 30 OS
// threads can run 1024-thread blocks at once, 120 can run 256-thread
// blocks; past that RunBlocks reports that it cannot map the stacks. Shared
// memory is thread_local (kernelc/block.h): each OS thread that runs a
// kernel holds one copy of every __shared__ variable of the library and
// kMaxDynamicSharedBytes per `extern __shared__` name.
//
// How generated code uses it
// --------------------------
// The entry file of each source (templates/cpp/host_kernels.cc.tmpl,
// compiled with -D__KERNELC_HOST__ and kernelc's include directories)
// defines, after `#include KC_USER_SOURCE`, one entry per kernel (runtime
// ABI 7):
//
//   // a kernel that uses block-level features (sema's block_executor)
//   extern "C" int32_t SYMBOL(const kc_block_range* r, kc_error* e, PARAMS) {
//     return ::kc::host::RunBlocks(*r, "KERNEL", e, [&] { KERNEL(ARGS); });
//   }
//   // any other kernel: the entry is the multiversioned function
//   extern "C" KC_HOST_CLONES_ int32_t SYMBOL(const kc_block_range* r,
//                                             kc_error*, PARAMS) {
//     ::kc::host::RunThreadLoop(r->launch, r->block_begin, r->block_end,
//                               [&]() KC_HOST_INLINE_ { KERNEL(ARGS); });
//     return 0;
//   }
//   // a kernel whose guard sema elides (guard_elided), bound by the
//   // parameter BOUND, its index of type INDEX: only the threads below the
//   // bound run (where BOUND's type is wider than INDEX, a bound that
//   // IndexHolds refuses runs RunThreadLoop instead); blocks of 2^SHIFT
//   // threads in one loop over the range's threads, others one loop per
//   // block (RunThreadLoopBelow<INDEX>, the same arguments)
//   extern "C" KC_HOST_CLONES_ int32_t SYMBOL(const kc_block_range* r,
//                                             kc_error*, PARAMS) {
//     auto thread = [&]() KC_HOST_INLINE_ { KERNEL(ARGS); };
//     ::kc::host::RunFlatLoopBelow<INDEX, SHIFT>(r->launch, r->block_begin,
//                                                r->block_end, BOUND, thread);
//     return 0;
//   }
//
// and, for every `extern __shared__ T name[]` its kernels reach, in the
// declaration's namespace (an unnamed one included):
//   KC_HOST_EXTERN_SHARED(T, name);
// A block kernel's threads run the baseline instruction set: a lambda
// inside a multiversioned function is not cloned, and each thread's code is
// scalar anyway. To clone it too, pass the non-template RunBlocks a thread
// function of external linkage that carries KC_HOST_CLONES_.
//
// The handler, per batch element, after sizing the grid (kc::rt::SizeGrid),
// calls the entry once with the whole launch (kc::rt::WholeLaunch) when it
// is too small to split (kc::rt::StaysOnCaller) or the batch is spread
// over the pool already (kc::rt::BatchHelpers > 0: each element's grid
// then stays on its thread); else kc::rt::RunSplitLaunch (kernelc/
// grid_split.h, prebuilt) runs it in the ranges of kc::rt::SplitGrid on
// XLA's pool, with pool_threads = ffi::ThreadPool::num_threads() (asked
// only then), through a function that calls the entry with a record of its
// arguments, and KC_SHARED_BYTES's value (0 without it). A failure becomes
// an FFI error with the message as it is (it names the kernel).
// runtime/std_pool.h's RunLaunch does the same with a std::thread pool.
//
// runtime/src/block_exec.cc is compiled with kernelc (-O2 -fPIC
// -fvisibility=hidden -fno-exceptions) into its prebuilt runtime,
// libkernelc_runtime.a, which every library links with Boost.Context's
// libboost_context.a (static and position independent: the library needs
// no Boost at run time) with -Wl,--exclude-libs, which keeps their
// functions out of the library's exports; kernelc embeds both archives.
// Kernel sources are compiled with
// `-Xclang -no-enable-noundef-analysis`: CUDA code passes values that only
// some threads set through its own functions (`int v; if (lane == 0) v =
// atomicAdd(...); v = broadcast(v);`), which clang otherwise treats as
// undefined behaviour and compiles into every thread doing the atomicAdd
// (seen with clang 19; the intrinsics here are not affected).
#ifndef KERNELC_CPU_EXEC_H_
#define KERNELC_CPU_EXEC_H_

#if !defined(__KERNELC_HOST__)
#error "kernelc/cpu_exec.h is for code compiled for the CPU (__KERNELC_HOST__)"
#endif

#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <type_traits>

#include "kernelc.h"
#include "kernelc/launch.h"

namespace kc::host {

// The usable stack of each fiber; a guard page lies below it. Sanitizers
// grow frames and run their reports on the fiber's stack.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr size_t kFiberStackBytes = 512 * 1024;
#else
constexpr size_t kFiberStackBytes = 64 * 1024;
#endif

// Forces a call to be inlined, for the lambda that holds a kernel call.
#define KC_HOST_INLINE_ __attribute__((always_inline))

// Vectorizes the loop that follows with two vectors per iteration rather
// than Clang's four (AVX2: 16 floats rather than 32), so that a block of
// few threads (16) runs in vectors, not in the scalar remainder of a
// 32-wide loop.
#if defined(__clang__)
#define KC_HOST_SHORT_INTERLEAVE_ _Pragma("clang loop interleave_count(2)")
#else
#define KC_HOST_SHORT_INTERLEAVE_
#endif

// Tells the compiler that `cond`, free of side effects, holds. (GCC, which
// builds the runtime's tests, has no __builtin_assume before version 13.)
#if defined(__clang__)
#define KC_HOST_ASSUME_(cond) __builtin_assume(cond)
#else
#define KC_HOST_ASSUME_(cond) \
  do {                        \
    if (!(cond)) __builtin_unreachable(); \
  } while (0)
#endif

// Runs `thread()` for every thread of the blocks [begin, end) of `launch`
// (linear block indices, x fastest), blocks and threads in order, with
// threadIdx, blockIdx, blockDim and gridDim set. Inlined into its caller,
// with `thread`, so that a kernel that `thread` calls vectorizes over
// threadIdx.x: each index is stored in the loop that owns it, and the
// compiler forwards the stores to the kernel's loads.
template <typename Thread>
KC_HOST_INLINE_ inline void RunThreadLoop(const kc_launch& launch,
                                          uint64_t begin, uint64_t end,
                                          Thread&& thread) {
  GridState& state = grid_state;
  const kc_dim3 grid = launch.grid;
  const kc_dim3 block = launch.block;
  state.grid_dim = {Index(grid.x), Index(grid.y), Index(grid.z)};
  state.block_dim = {Index(block.x), Index(block.y), Index(block.z)};
  const uint64_t row = grid.x;
  const uint64_t plane = row * grid.y;
  // The range as runs along x: one per (z, y) row it touches.
  for (uint64_t i = begin; i < end;) {
    const uint64_t in_plane = i % plane;
    const uint32_t x0 = static_cast<uint32_t>(in_plane % row);
    const uint64_t left = end - i;
    const uint32_t x1 =
        left < row - x0 ? static_cast<uint32_t>(x0 + left) : grid.x;
    state.block.z = Index(static_cast<uint32_t>(i / plane));
    state.block.y = Index(static_cast<uint32_t>(in_plane / row));
    for (uint32_t bx = x0; bx < x1; ++bx) {
      state.block.x = Index(bx);
      for (uint32_t tz = 0; tz < block.z; ++tz) {
        state.thread.z = Index(tz);
        for (uint32_t ty = 0; ty < block.y; ++ty) {
          state.thread.y = Index(ty);
          for (uint32_t tx = 0; tx < block.x; ++tx) {
            state.thread.x = Index(tx);
            thread();
          }
        }
      }
    }
    i += x1 - x0;
  }
}

// Sets gridDim and blockDim of a one-dimensional `launch` whose blocks
// have `block_x` threads, and the y and z of blockIdx and threadIdx, which
// such a launch keeps at 0. A constant `block_x` reaches the kernel as one.
KC_HOST_INLINE_ inline void SetOneDimensional(GridState& state,
                                              const kc_launch& launch,
                                              uint32_t block_x) {
  state.grid_dim = {Index(launch.grid.x), Index(1u), Index(1u)};
  state.block_dim = {Index(block_x), Index(1u), Index(1u)};
  state.block.y = state.block.z = Index(0u);
  state.thread.y = state.thread.z = Index(0u);
}

// The fewest threads of a block that RunThreadLoopBelow runs in its long
// vector loop: four iterations of Clang's (AVX2: 32 floats each).
constexpr uint32_t kLongLoopThreads = 128;

// Runs `thread()` for the threads of the blocks [begin, end) of a
// one-dimensional `launch` (grid.y = grid.z = block.y = block.z = 1) whose
// global index blockIdx.x * blockDim.x + threadIdx.x is below `limit`, in
// order: the threads of the last block past `limit` do not run. For a
// kernel whose guard bounds its threads by `limit` (sema's guard_elided),
// which they would skip anyway. `I` is the type the kernel's index passes
// through at its narrowest (model::GridGuard); the caller ensures that
// limit <= numeric_limits<I>::max() (IndexHolds). A limit of 0 or less
// runs no thread. The loop tells the compiler that
// each index is below `limit`, in 64 bits and in I, which proves the
// kernel's guard true after inlining: the loop vectorizes without masked
// loads and stores.
template <typename I, typename Thread>
KC_HOST_INLINE_ inline void RunThreadLoopBelow(const kc_launch& launch,
                                               uint64_t begin, uint64_t end,
                                               int64_t limit,
                                               Thread&& thread) {
  GridState& state = grid_state;
  const uint32_t bdx = launch.block.x;
  SetOneDimensional(state, launch, bdx);
  // 32-bit block indices, as blockIdx.x holds them: the index the loop
  // assumes below `limit` is then the very value the kernel computes.
  for (uint32_t bx = static_cast<uint32_t>(begin); bx < end; ++bx) {
    const int64_t base = static_cast<int64_t>(bx) * bdx;
    if (base >= limit) break;
    const int64_t left = limit - base;
    const uint32_t count =
        left < static_cast<int64_t>(bdx) ? static_cast<uint32_t>(left) : bdx;
    state.block.x = Index(bx);
    auto run = [&](uint32_t tx) KC_HOST_INLINE_ {
      state.thread.x = Index(tx);
      KC_HOST_ASSUME_(base + tx < limit);
      if constexpr (sizeof(I) < sizeof(int64_t)) {
        KC_HOST_ASSUME_(static_cast<I>(bx * bdx + tx) < static_cast<I>(limit));
      } else if constexpr (!std::is_signed_v<I>) {
        KC_HOST_ASSUME_(static_cast<I>(base + tx) < static_cast<I>(limit));
      }
      thread();
    };
    // Two copies of the vector loop: Clang's own, four vectors per
    // iteration, for a block of many threads (saxpy, n = 1024 in blocks of
    // 256: 13% fewer instructions than two vectors per iteration), and the
    // short one for a few threads, which would otherwise run in the scalar
    // remainder.
    if (count >= kLongLoopThreads) {
      for (uint32_t tx = 0; tx < count; ++tx) run(tx);
    } else {
      KC_HOST_SHORT_INTERLEAVE_
      for (uint32_t tx = 0; tx < count; ++tx) run(tx);
    }
  }
}

// Runs what RunThreadLoopBelow<I> runs, for a launch whose blocks have
// 2^kBlockShift threads (launch.block.x must be that), as one loop over
// the global index of the range's threads rather than one loop per block:
// the vector loop starts once per range, not once per block (saxpy, n =
// 1024 in blocks of 256: a fifth fewer instructions). Each thread's
// blockIdx.x and threadIdx.x are its index shifted and masked, which the
// compiler folds back into the index the kernel computes, as long as that
// index is a 32-bit value: a range whose threads reach 2^32 runs
// RunThreadLoopBelow.
template <typename I, uint32_t kBlockShift, typename Thread>
KC_HOST_INLINE_ inline void RunFlatLoopBelow(const kc_launch& launch,
                                             uint64_t begin, uint64_t end,
                                             int64_t limit, Thread&& thread) {
  static_assert(kBlockShift <= 10, "a block has at most 1024 threads");
  // Set before the returns below: set after them, the constant blockDim
  // did not reach the kernel's loads (Clang 19), and the loop stayed
  // scalar with its guard.
  GridState& state = grid_state;
  SetOneDimensional(state, launch, 1u << kBlockShift);
  if (limit <= 0) return;
  const uint64_t first = begin << kBlockShift;
  uint64_t last = end << kBlockShift;
  if (last > static_cast<uint64_t>(limit)) last = static_cast<uint64_t>(limit);
  if (first >= last) return;
  if (last > std::numeric_limits<uint32_t>::max()) {
    RunThreadLoopBelow<I>(launch, begin, end, limit, thread);
    return;
  }
  auto run = [&](uint32_t g) KC_HOST_INLINE_ {
    state.block.x = Index(g >> kBlockShift);
    state.thread.x = Index(g & ((1u << kBlockShift) - 1));
    KC_HOST_ASSUME_(static_cast<int64_t>(g) < limit);
    if constexpr (sizeof(I) < sizeof(int64_t) || !std::is_signed_v<I>) {
      KC_HOST_ASSUME_(static_cast<I>(g) < static_cast<I>(limit));
    }
    thread();
  };
  const uint32_t g0 = static_cast<uint32_t>(first);
  const uint32_t g1 = static_cast<uint32_t>(last);
  // As in RunThreadLoopBelow: the long loop for many threads, the short
  // one for few.
  if (g1 - g0 >= kLongLoopThreads) {
    for (uint32_t g = g0; g < g1; ++g) run(g);
  } else {
    KC_HOST_SHORT_INTERLEAVE_
    for (uint32_t g = g0; g < g1; ++g) run(g);
  }
}

// Whether RunThreadLoopBelow<I> may run up to `bound`, a guard's bound:
// whether the bound is at most numeric_limits<I>::max(), where the kernel's
// index is exact, and int64_t's, the limit's type. A negative bound holds too: no thread runs below it, and
// none would pass the guard. Only the upper limit is tested, so that the
// compiler learns nothing of the bound's sign that would let it rewrite the
// kernel's signed comparison into another form than the loop assumes; for
// a bound no wider than I the test is always true and compiles away.
template <typename I, typename Bound>
KC_HOST_INLINE_ inline bool IndexHolds(Bound bound) {
  // The limit is an int64_t: no more than its maximum either.
  constexpr uint64_t kMost =
      static_cast<uint64_t>(std::numeric_limits<I>::max()) <
              static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
          ? static_cast<uint64_t>(std::numeric_limits<I>::max())
          : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if constexpr (static_cast<uint64_t>(std::numeric_limits<Bound>::max()) <=
                kMost) {
    return true;
  } else {
    return bound <= static_cast<Bound>(kMost);
  }
}

// One thread of a block: calls the kernel with the launch's arguments,
// which `context` holds.
using ThreadFunction = void (*)(const void* context);

// Runs the blocks of `range` under the block executor, one after another on
// the calling thread, each thread of a block as a fiber that calls
// `thread(context)`. Returns 0, or non-zero with `error` saying why
// (prefixed with `kernel`, the kernel's name). Never throws, prints or
// aborts; safe to call from several threads at once. Must not be called by
// a kernel's thread.
int32_t RunBlocks(const kc_block_range& range, const char* kernel,
                  kc_error* error, ThreadFunction thread, const void* context);

// The same, with the thread given as a callable (a lambda that calls the
// kernel).
template <typename Thread>
int32_t RunBlocks(const kc_block_range& range, const char* kernel,
                  kc_error* error, const Thread& thread) {
  return RunBlocks(
      range, kernel, error,
      [](const void* t) { (*static_cast<const Thread*>(t))(); }, &thread);
}

}  // namespace kc::host

// The same executor for a thread compiled as a resumable function
// (kernelc's compiler/backends/resumable_threads.cc, which rewrites the
// calls of RunBlocks whose thread function it can make resumable, and the
// calls of kernelc/block.h in that function, into calls of these). A
// thread is then a coroutine whose frame the executor keeps, one per
// thread of the block, rather than a fiber with a stack: `step(context,
// &frame)` starts it (frame null) or resumes it, and returns a KC_STEP_
// status (kernelc/launch.h). A wait is an arrival, which says whether the
// thread must suspend, then, once it goes on, the collection of its result.
// The executor runs the warps in order, each as long as it has lanes ready,
// in lane order; a thread that yields waits until the other warps have run.
extern "C" {
int32_t kc_host_run_resumable_blocks(
    const kc_block_range* range, const char* kernel, kc_error* error,
    int32_t (*step)(const void* context, void** frame), const void* context);
// The same for threads whose only waits are barriers (and BlockFail): the
// executor runs a block in rounds, each thread that has not returned, in
// thread order, to its next barrier or its end, after which the barrier is
// complete; no record of who waits where is needed, nor can such threads
// wait for each other forever. An arrival then always suspends.
int32_t kc_host_run_barrier_blocks(
    const kc_block_range* range, const char* kernel, kc_error* error,
    int32_t (*step)(const void* context, void** frame), const void* context);
// The same for threads whose only waits are barriers and warp collectives,
// compiled as loops (compiler/backends/thread_loops.h): a block runs in
// rounds of calls of `round` (or, on processors of x86-64-v3,
// `round_x86_64_v3`). A call runs the threads whose threadIdx is in
// [x_begin, x_end) x [y_begin, y_end) x [z_begin, z_end), all at
// `region`, to their next wait or their end, and writes where each is then
// to `next[t]` (t, the thread's linear index): a region, or KC_LOOP_DONE
// (kernelc/launch.h). Threads start at KC_LOOP_START. Their frames are
// `frames`, frame_bytes per thread of the `capacity` (a multiple of 16)
// that they hold, 64-byte aligned. The threads' barriers return
// `barrier_result`, and add their predicates to *barrier_count. A thread
// that arrives at a warp collective leaves its request in waits[t] (the
// warp's lanes side by side, as the collective's compute function takes
// them), and, once the executor has completed the collective, finds its
// result in waits[t].out. barriers[r] names the barrier at region r (of
// `regions`), null where r is a warp collective.
typedef kc::host::WarpLane kc_host_loop_wait;
typedef void (*kc_host_round)(const void* context, void* frames,
                              uint64_t capacity, uint8_t* next, uint32_t region,
                              uint32_t x_begin, uint32_t x_end,
                              uint32_t y_begin, uint32_t y_end,
                              uint32_t z_begin, uint32_t z_end,
                              int32_t barrier_result, int32_t* barrier_count,
                              kc_host_loop_wait* waits);
typedef struct kc_host_thread_loops {
  uint64_t frame_bytes;
  kc_host_round round;
  kc_host_round round_x86_64_v3;
  uint32_t regions;
  const char* const* barriers;
} kc_host_thread_loops;
int32_t kc_host_run_thread_loops(const kc_block_range* range,
                                 const char* kernel, kc_error* error,
                                 const kc_host_thread_loops* loops,
                                 const void* context);
// The frame of the thread that starts, `size` bytes; null without memory.
void* kc_host_thread_frame(uint64_t size);
bool kc_host_barrier_arrive(void* executor, const char* name, int predicate);
int kc_host_barrier_result(void* executor);
// Sets *result to where the lane's result will be (16-byte aligned).
bool kc_host_warp_arrive(void* executor, const kc::host::WarpRequest* request,
                         const void* context, const void** result);
bool kc_host_active_mask_arrive(void* executor, const char* file, uint32_t line,
                                uint32_t column);
uint32_t kc_host_active_mask_result(void* executor);
bool kc_host_yield_arrive(void* executor);
bool kc_host_fail_arrive(void* executor, const char* message);
}

#endif  // KERNELC_CPU_EXEC_H_

#ifndef KERNELC_COMPILER_BACKENDS_EXECUTOR_NAMES_H_
#define KERNELC_COMPILER_BACKENDS_EXECUTOR_NAMES_H_

// The names by which the passes of resumable_threads.cc and thread_loops.cc
// find the CPU's block executor in a kernel's module: its functions and
// state as kernelc/cpu_exec.h and kernelc/host.h declare them.
namespace kernelc::backends {

// kc::host::grid_state (kernelc/host.h), as Clang mangles it.
inline constexpr const char* kGridState = "_ZN2kc4host10grid_stateE";

// The executor's side of a resumable thread (extern "C" in
// kernelc/cpu_exec.h).
inline constexpr const char* kRunResumableBlocks =
    "kc_host_run_resumable_blocks";
inline constexpr const char* kRunBarrierBlocks = "kc_host_run_barrier_blocks";
inline constexpr const char* kRunThreadLoops = "kc_host_run_thread_loops";
inline constexpr const char* kThreadFrame = "kc_host_thread_frame";
inline constexpr const char* kBarrierArrive = "kc_host_barrier_arrive";
inline constexpr const char* kBarrierResult = "kc_host_barrier_result";
inline constexpr const char* kWarpArrive = "kc_host_warp_arrive";
inline constexpr const char* kActiveMaskArrive = "kc_host_active_mask_arrive";
inline constexpr const char* kActiveMaskResult = "kc_host_active_mask_result";
inline constexpr const char* kYieldArrive = "kc_host_yield_arrive";
inline constexpr const char* kFailArrive = "kc_host_fail_arrive";

// Marks a step function (resumable_threads.cc); its value names the
// coroutine it steps.
inline constexpr const char* kStepAttribute = "kernelc-step";
// Marks a step function whose threads thread_loops.cc may make loops of.
inline constexpr const char* kLoopsAttribute = "kernelc-loops";

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_EXECUTOR_NAMES_H_

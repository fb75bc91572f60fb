// The launch ABI between a generated handler and the kernel code it calls.
// Plain C structs; their layout is part of the runtime ABI and is held by
// runtime/abi_layout_test.cc.
#ifndef KERNELC_LAUNCH_H_
#define KERNELC_LAUNCH_H_

#include <stdint.h>

// Bumped whenever a struct here, a generated entry point's signature or
// the surface of the prebuilt runtime (libkernelc_runtime.a, declared in
// kernelc/batch.h, ffi.h, grid_split.h and runtime.h, and the block
// executor's in kernelc/block.h and cpu_exec.h) changes. Generated code
// checks it with #error.
#define KC_RUNTIME_ABI_VERSION 7

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kc_dim3 {
  uint32_t x, y, z;
} kc_dim3;

// A grid launch: blocks per grid and threads per block, as in CUDA.
typedef struct kc_launch {
  kc_dim3 grid;
  kc_dim3 block;
} kc_launch;

// A part of a launch that one CPU entry call runs: the blocks whose linear
// index (x fastest, then y, then z) lies in [block_begin, block_end), each
// with `shared_bytes` of dynamic shared memory (KC_SHARED_BYTES). The handler
// splits a launch into such ranges to spread it over a thread pool
// (kernelc/grid_split.h); kernelc/cpu_exec.h runs one.
typedef struct kc_block_range {
  kc_launch launch;
  uint64_t block_begin;
  uint64_t block_end;
  uint64_t shared_bytes;
} kc_block_range;

// Why a CPU entry call failed: a NUL-terminated message, cut to fit. Written
// only by a call that returns non-zero.
typedef struct kc_error {
  char message[1024];
} kc_error;

// What a step of a resumable thread of the CPU's block executor returns
// (kernelc/cpu_exec.h): kernelc's compiler makes the step functions, the
// prebuilt runtime calls them.
enum {
  KC_STEP_WAITS = 0,     // the thread waits (at a barrier, in a warp function)
  KC_STEP_RETURNED = 1,  // the thread has returned
  KC_STEP_NO_FRAME = 2,  // there was no memory for the thread's frame
};

// Where a thread of a block run as loops (kernelc/cpu_exec.h's
// kc_host_run_thread_loops) is between rounds, besides the regions that
// its frame's index names (below these).
enum {
  KC_LOOP_START = 0xfe,  // not started
  KC_LOOP_DONE = 0xff,   // returned
};

// Memory that a launch writes: an output buffer, `bytes` long from `data`.
typedef struct kc_span {
  void* data;
  uint64_t bytes;
} kc_span;

// A thread pool that a launch or a batch spreads over (XLA's intra-op pool
// in generated code): how many threads it has, and how to hand it a task,
// `task(arg)`, which it runs once on one of them (or at once on the
// caller's, where it has none). The runtime asks for the size only of a
// launch large enough to split.
typedef struct kc_pool {
  void* self;
  int64_t (*num_threads)(void* self);
  void (*schedule)(void* self, void (*task)(void* arg), void* arg);
} kc_pool;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KERNELC_LAUNCH_H_

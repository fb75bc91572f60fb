// The block executor of kernelc/cpu_exec.h: the threads of a CUDA block as
// fibers on one OS thread, and the barriers and warp collectives of
// kernelc/block.h on top of them. Compiled once, with kernelc, into its
// prebuilt runtime (libkernelc_runtime.a), which every generated library
// links together with Boost.Context's archive (libboost_context.a), whose
// context switch it uses.
//
// Everything a block needs lives in its OS thread's Worker, so blocks on
// different OS threads share nothing here and need no locks. Fibers switch
// directly to one another (one jump per switch); the worker's own stack is
// left only to start a block and re-entered when the block ends or fails.
// A fiber never moves to another OS thread, which is what lets the compiler
// keep thread_local addresses (grid_state, __shared__ variables) in
// registers across the calls that switch.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <new>

#include "kernelc/cpu_exec.h"

#if defined(__SANITIZE_THREAD__)
#define KC_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KC_TSAN_ 1
#endif
#endif

#if defined(KC_TSAN_)
// ThreadSanitizer's fiber interface: it must know which stack runs, or it
// takes the switches for stack corruption.
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

// Boost.Context's context switch (boost/context/detail/fcontext.hpp), four
// assembly routines of its archive, declared here with their C ABI so that
// a generated library compiles without Boost's headers: kernelc carries the
// archive, not the headers.
namespace boost::context::detail {
typedef void* fcontext_t;
struct transfer_t {
  fcontext_t fctx;
  void* data;
};
extern "C" transfer_t jump_fcontext(fcontext_t const to, void* vp);
extern "C" transfer_t ontop_fcontext(fcontext_t const to, void* vp,
                                     transfer_t (*fn)(transfer_t));
extern "C" fcontext_t make_fcontext(void* sp, size_t size,
                                    void (*fn)(transfer_t));
}  // namespace boost::context::detail

namespace kc::host {
namespace {

namespace fc = boost::context::detail;

// Where a fiber of the running block is.
enum class Wait : uint8_t {
  kNone,        // running or ready to run
  kBarrier,     // in a block barrier
  kWarp,        // in a warp collective
  kActiveMask,  // in __activemask
  kDone,        // returned
};

// What a switch to a fiber or an arrival at a barrier reads and writes, 32
// bytes: two fibers to a cache line. A barrier visits every fiber of the
// block, whose stacks already fill the processor's first-level cache; the
// rest of a fiber's state is in FiberWait.
struct alignas(32) Fiber {
  fc::fcontext_t context = nullptr;
  const char* barrier = nullptr;  // the barrier function it waits in
  Index3 index{};                 // its threadIdx
  Wait wait = Wait::kNone;
  // Returned from its last thread and waiting, in Worker::Start, for the
  // next; else new, or abandoned by a failed block, and started afresh.
  bool parked = false;
};
static_assert(sizeof(Fiber) == 32);

// The rest of a fiber's state: where it called __activemask, and its
// sanitizer fiber.
struct FiberWait {
  // The source location of its __activemask call, and the result.
  const char* file = nullptr;
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t active_mask = 0;
#if defined(KC_TSAN_)
  void* tsan = nullptr;
#endif
};

struct Warp {
  uint32_t present = 0;      // lanes that exist in this block
  uint32_t exited = 0;       // lanes that returned
  uint32_t waiting = 0;      // lanes in a collective
  uint32_t active_mask = 0;  // lanes in __activemask
  // Whether a waiting lane made another request than the first waiting
  // lane's: while none did, every waiting lane made the same, and a
  // completion need not compare them.
  bool mixed = false;
  // The collective each waiting lane called, with the lanes it waits for.
  const WarpCollective* op[kWarpSize] = {};
  uint32_t mask[kWarpSize] = {};
  uint32_t size[kWarpSize] = {};
  // The context its WarpCall named (a reduction's operator, on the lane's
  // stack or in its frame, which lives while the lane waits).
  const void* context[kWarpSize] = {};
  WarpLane lanes[kWarpSize];
};

// Fiber indices in the order they will run.
class ReadyQueue {
 public:
  bool Reset(uint32_t capacity) {
    slots_.reset(new (std::nothrow) int32_t[capacity]);
    capacity_ = capacity;
    Clear();
    return slots_ != nullptr;
  }
  void Clear() { head_ = count_ = 0; }
  bool empty() const { return count_ == 0; }
  void PushBack(int32_t f) {
    uint32_t tail = head_ + count_++;
    if (tail >= capacity_) tail -= capacity_;
    slots_[tail] = f;
  }
  void PushFront(int32_t f) {
    head_ = head_ == 0 ? capacity_ - 1 : head_ - 1;
    slots_[head_] = f;
    ++count_;
  }
  int32_t PopFront() {
    const int32_t f = slots_[head_];
    if (++head_ == capacity_) head_ = 0;
    --count_;
    return f;
  }

 private:
  std::unique_ptr<int32_t[]> slots_;
  uint32_t capacity_ = 0;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

// "(x, y, z)" of a thread or block index.
struct IndexText {
  char text[48];
};
IndexText Text(uint32_t x, uint32_t y, uint32_t z) {
  IndexText t;
  snprintf(t.text, sizeof t.text, "(%u, %u, %u)", x, y, z);
  return t;
}
IndexText Text(const Index3& i) {
  return Text(static_cast<uint32_t>(i.x), static_cast<uint32_t>(i.y),
              static_cast<uint32_t>(i.z));
}

// The fields that compiler/backends/thread_loops.cc writes.
static_assert(offsetof(WarpRequest, op) == 0 &&
              offsetof(WarpRequest, mask) == 8 &&
              offsetof(WarpRequest, size) == 12 &&
              offsetof(WarpRequest, a) == 16 &&
              offsetof(WarpRequest, b) == 20 &&
              offsetof(WarpRequest, in) == 24);
static_assert(offsetof(WarpLane, in) == 0 && offsetof(WarpLane, out) == 32 &&
              offsetof(WarpLane, a) == 64 && offsetof(WarpLane, b) == 68 &&
              offsetof(WarpLane, mask) == 72 &&
              offsetof(WarpLane, size) == 76 && offsetof(WarpLane, op) == 80 &&
              offsetof(WarpLane, context) == 88 && sizeof(WarpLane) == 96);

constexpr int32_t kScheduler = -1;  // the worker's own context

// A resumable thread's step (kc_host_run_resumable_blocks).
using StepFunction = int32_t (*)(const void* context, void** frame);

class Worker {
 public:
  ~Worker() { Release(); }

  // Makes room for blocks of `threads` threads, with a stack each if
  // `stacks` (fibers). On failure, says why in `message` and returns
  // false.
  bool Reserve(uint32_t threads, bool stacks, char* message, size_t size);

  // Prepares blocks of `block` threads that run `thread(context)` as
  // fibers, or, with `step` instead, as resumable functions; in `rounds`
  // where they wait at barriers only.
  void Begin(GridState* state, const kc_dim3& block, ThreadFunction thread,
             StepFunction step, bool rounds, const kc_host_thread_loops* loops,
             const void* context);
  // Runs one block; grid_state.block is already set. False when it failed,
  // with message() saying why.
  bool RunBlock();
  const char* message() const { return message_; }

  int Barrier(const char* name, int predicate);
  void Collective(const WarpRequest& request, const void* context, void* out,
                  uint32_t out_size);
  uint32_t ActiveMask(const char* file, uint32_t line, uint32_t column);
  void Yield();
  // Ends the block with an error. A fiber does not come back; a resumable
  // thread does, and suspends for good.
  void Fail(const char* format, ...) __attribute__((format(printf, 2, 3)));

  // The arrivals of a resumable thread at a wait: true when it must
  // suspend. The result of a barrier or warp collective is then
  // barrier_result(), or at ResultSlot().
  bool ArriveBarrier(const char* name, int predicate);
  bool ArriveCollective(const WarpRequest& request, const void* context);
  void WarpResult(void* out, uint32_t out_size) const;
  // Where the running thread's result of a warp collective will be.
  const void* ResultSlot() const {
    return warps_[current_ / kWarpSize].lanes[current_ % kWarpSize].out;
  }
  void ArriveActiveMask(const char* file, uint32_t line, uint32_t column);
  uint32_t active_mask() const { return waits_[current_].active_mask; }
  bool ArriveYield();
  int barrier_result() const { return barrier_result_; }
  // The frame of the resumable thread that starts; null without memory.
  void* Frame(uint64_t size);
  // The frame arena, at least `bytes` long and 64-byte aligned; null
  // without memory. Grows only before a block's threads start.
  unsigned char* FrameArena(size_t bytes);

 private:
  static void FiberMain(fc::transfer_t from);
  [[noreturn]] void Start();
  void Exit();
  // A thread has returned: the barrier and warp collectives that waited for
  // it only complete.
  void Retire();
  // Whether the block's threads are fibers: neither resumable functions
  // (step_) nor loops (loops_).
  bool on_fibers() const { return step_ == nullptr && loops_ == nullptr; }
  bool RunResumableBlock();
  bool RunLoopBlock();
  // Threads as loops: whether a thread at `region` waits at a barrier;
  // completes warp w's collectives whose lanes have all arrived, setting
  // in `go` their lanes (false where it failed); reports the deadlock.
  bool AtBarrier(uint8_t region) const;
  bool CompleteLoopCollectives(uint32_t w, const uint8_t* where,
                               bool all_waiting, uint32_t& go);
  void LoopDeadlock(const uint8_t* where);
  void RunSweeps();
  void RunRounds();
  // Steps thread f, a resumable one, to its next wait or its end.
  __attribute__((always_inline)) void Step(uint32_t f);
  // Makes thread f ready to run: on the queue (fibers), or among its
  // warp's ready lanes (resumable threads).
  void MakeReady(int32_t f) {
    if (!on_fibers())
      ready_lanes_[f / kWarpSize] |= 1u << (f % kWarpSize);
    else
      ready_.PushBack(f);
  }
  void CompleteBarrier();
  bool CompleteCollective(Warp& warp, int lane);
  // Every switch is Boost.Context's ontop_fcontext with OnArrival, not
  // jump_fcontext. jump_fcontext is entered by a call and leaves by an
  // indirect jump: every switch leaves one return address too many on the
  // processor's stack of predicted returns, and the next return, on the
  // fiber switched to, is mispredicted (measured: 6 of the 11 ns of a
  // switch). ontop_fcontext runs OnArrival on the stack switched to, and
  // OnArrival's return pops that address. Where both fibers wait at the
  // same call of the kernel (one barrier, or one shuffle, in a loop), every
  // return is then predicted; where they wait at different calls (the
  // thread switched from is at the next barrier, the one switched to still
  // at the one before; an unrolled loop of shuffles), the kernel's return
  // from the executor still is not. ontop_fcontext cannot start a fresh
  // context (Boost starts those with jump_fcontext only), so RunBlock
  // starts each new fiber with one jump, after which it waits in
  // FiberMain.
  static fc::transfer_t OnArrival(fc::transfer_t from);
  fc::transfer_t Jump(fc::fcontext_t to) {
    return fc::ontop_fcontext(to, this, &Worker::OnArrival);
  }
  // Records the context of whoever switched to this fiber, to resume it
  // later.
  void Arrived(fc::fcontext_t from);
  // Inlined into the calls that switch: each call that returns between the
  // switch and the kernel's code is one more return to predict.
  __attribute__((always_inline)) void SwitchTo(int32_t next);
  __attribute__((always_inline)) void Suspend();
  __attribute__((always_inline)) int32_t NextReady();
  // Out of line, so that the common path of a switch saves few registers.
  __attribute__((noinline)) bool ReleaseActiveMasks();
  __attribute__((noinline)) void Deadlock();
  // A warp function called with a mask without the caller's lane.
  __attribute__((noinline, cold)) void NotOwnLane(const WarpRequest& request);
  void Describe(int32_t f, char* out, size_t size) const;
  void Release();
  // Each fiber's stack starts below the top of its mapping by a different
  // number of cache lines: the stacks are a page multiple apart, so their
  // tops would all fall into the same few sets of the processor's caches
  // and evict one another at every switch (measured: a warp shuffle took
  // twice as long).
  char* StackTop(uint32_t f) const {
    const size_t color = static_cast<size_t>(f) * 7 % 64 * 64;
    return stacks_ + (static_cast<size_t>(f) + 1) * stride_ - color;
  }
  static constexpr size_t kStackColors = 64 * 64;

  // Storage, sized for `capacity_` threads; stacks for `stack_capacity_`.
  uint32_t capacity_ = 0;
  std::unique_ptr<Fiber[]> fibers_;
  std::unique_ptr<FiberWait[]> waits_;
  std::unique_ptr<Warp[]> warps_;
  ReadyQueue ready_;  // fibers
  // Resumable threads: the lanes of each warp that are ready to run, and
  // those that yielded, ready once every other warp has run.
  uint32_t ready_lanes_[kMaxBlockThreads / kWarpSize] = {};
  uint32_t yielded_[kMaxBlockThreads / kWarpSize] = {};
  uint32_t stack_capacity_ = 0;
  char* stacks_ = nullptr;
  size_t stride_ = 0;  // a stack and its guard page
  size_t mapped_ = 0;
  // The resumable threads' frames: frame_[f] is thread f's, in a slot of
  // frame_bytes_ in the frame arena, which holds capacity_ of them.
  // Threads run as loops keep theirs in the arena too, their fields' copies
  // side by side.
  std::unique_ptr<void*[]> frame_;
  std::unique_ptr<unsigned char[]> frames_;  // the arena, arena_ aligned
  unsigned char* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  size_t frame_bytes_ = 0;
  // Threads run as loops: their warp functions' requests, and where each
  // thread is between rounds.
  std::unique_ptr<kc_host_loop_wait[]> loop_waits_;
  uint8_t where_[kMaxBlockThreads] = {};
  uint8_t next_[kMaxBlockThreads] = {};

  // The launch.
  // This OS thread's grid_state: the worker, like a fiber, never moves to
  // another thread.
  GridState* state_ = nullptr;
  ThreadFunction thread_ = nullptr;
  StepFunction step_ = nullptr;  // set for resumable threads
  bool rounds_ = false;          // which wait at barriers only
  const kc_host_thread_loops* loops_ = nullptr;  // set for loops
  kc_host_round round_ = nullptr;
  const void* thread_context_ = nullptr;
  uint32_t threads_ = 0;  // per block

  // The running block.
  fc::fcontext_t scheduler_ = nullptr;
#if defined(KC_TSAN_)
  void* scheduler_tsan_ = nullptr;
#endif
  int32_t current_ = kScheduler;  // the fiber that runs
  int32_t from_ = kScheduler;     // the context that switched to it
  uint32_t live_ = 0;             // fibers that have not returned
  uint32_t arrived_ = 0;  // at the barrier
  // The fibers waiting at the barrier, a bit each in thread order: its
  // completion makes them ready without reading every fiber's state.
  uint64_t at_barrier_[kMaxBlockThreads / 64] = {};
  int barrier_count_ = 0;
  int barrier_result_ = 0;
  bool failed_ = false;
  char message_[sizeof(kc_error::message)] = {};
};

bool Worker::Reserve(uint32_t threads, bool stacks, char* message,
                     size_t size) {
  if (threads <= capacity_ && (!stacks || threads <= stack_capacity_))
    return true;
  const uint32_t capacity = (threads + kWarpSize - 1) / kWarpSize * kWarpSize;
  if (capacity > capacity_) {
    Release();
    const uint32_t warps = capacity / kWarpSize;
    fibers_.reset(new (std::nothrow) Fiber[capacity]);
    waits_.reset(new (std::nothrow) FiberWait[capacity]);
    warps_.reset(new (std::nothrow) Warp[warps]);
    frame_.reset(new (std::nothrow) void*[capacity]);
    frames_.reset();
    arena_ = nullptr;
    arena_bytes_ = 0;
    frame_bytes_ = 0;
    if (fibers_ == nullptr || waits_ == nullptr || warps_ == nullptr ||
        frame_ == nullptr || !ready_.Reset(capacity)) {
      snprintf(message, size, "cannot allocate the state of %u threads",
               capacity);
      capacity_ = 0;
      return false;
    }
    capacity_ = capacity;
  }
  if (!stacks) return true;
  Release();
  // One mapping for all stacks, each with a guard page below it. Only the
  // pages a fiber touches are committed.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  stride_ = kFiberStackBytes + kStackColors + page;
  const size_t bytes = stride_ * capacity;
  void* p =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) {
    snprintf(message, size, "cannot map %u fiber stacks of %zu KiB: %s",
             capacity, kFiberStackBytes / 1024, strerror(errno));
    Release();
    return false;
  }
  stacks_ = static_cast<char*>(p);
  mapped_ = bytes;
  for (uint32_t f = 0; f < capacity; ++f) {
    fibers_[f].parked = false;
    if (mprotect(stacks_ + f * stride_, page, PROT_NONE) != 0) {
      snprintf(message, size,
               "cannot place the guard pages of %u fiber stacks (each stack "
               "is two memory mappings; see vm.max_map_count): %s",
               capacity, strerror(errno));
      Release();
      return false;
    }
  }
  stack_capacity_ = capacity;
  return true;
}

// Unmaps the stacks (each fiber then starts afresh).
void Worker::Release() {
#if defined(KC_TSAN_)
  for (uint32_t f = 0; f < stack_capacity_; ++f) {
    if (waits_[f].tsan != nullptr) __tsan_destroy_fiber(waits_[f].tsan);
    waits_[f].tsan = nullptr;
  }
#endif
  if (stacks_ != nullptr) munmap(stacks_, mapped_);
  stacks_ = nullptr;
  mapped_ = 0;
  stack_capacity_ = 0;
}

unsigned char* Worker::FrameArena(size_t bytes) {
  if (bytes > arena_bytes_) {
    frames_.reset(new (std::nothrow) unsigned char[bytes + 64]);
    const uintptr_t base = reinterpret_cast<uintptr_t>(frames_.get());
    arena_ =
        frames_ == nullptr
            ? nullptr
            : reinterpret_cast<unsigned char*>((base + 63) & ~uintptr_t{63});
    arena_bytes_ = frames_ == nullptr ? 0 : bytes;
  }
  return arena_;
}

void* Worker::Frame(uint64_t size) {
  const size_t bytes = (size + 63) / 64 * 64;
  if (bytes > frame_bytes_) {
    // Before the block's first thread starts (its threads' frames are all
    // of one size): no frame of it lives yet.
    frame_bytes_ = FrameArena(bytes * capacity_) == nullptr ? 0 : bytes;
    if (frame_bytes_ == 0) return nullptr;
  }
  return arena_ + frame_bytes_ * current_;
}

void Worker::Begin(GridState* state, const kc_dim3& block,
                   ThreadFunction thread, StepFunction step, bool rounds,
                   const kc_host_thread_loops* loops, const void* context) {
  state_ = state;
  thread_ = thread;
  step_ = step;
  rounds_ = rounds;
  loops_ = loops;
  if (loops != nullptr) {
    round_ = loops->round;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("x86-64-v3")) round_ = loops->round_x86_64_v3;
#endif
  }
  thread_context_ = context;
  threads_ = block.x * block.y * block.z;
  uint32_t f = 0;
  for (uint32_t z = 0; z < block.z; ++z)
    for (uint32_t y = 0; y < block.y; ++y)
      for (uint32_t x = 0; x < block.x; ++x)
        fibers_[f++].index = Index3{Index(x), Index(y), Index(z)};
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (uint32_t w = 0; w < warps; ++w) {
    const uint32_t lanes = threads_ - w * kWarpSize;
    warps_[w].present =
        lanes >= static_cast<uint32_t>(kWarpSize) ? ~0u : (1u << lanes) - 1;
  }
}

bool Worker::RunBlock() {
  live_ = threads_;
  arrived_ = 0;
  memset(at_barrier_, 0, sizeof at_barrier_);
  barrier_count_ = 0;
  failed_ = false;
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (uint32_t w = 0; w < warps; ++w) {
    Warp& warp = warps_[w];
    warp.exited = warp.waiting = warp.active_mask = 0;
  }
  ready_.Clear();
  if (loops_ != nullptr) return RunLoopBlock();
  if (step_ != nullptr) return RunResumableBlock();
#if defined(KC_TSAN_)
  scheduler_tsan_ = __tsan_get_current_fiber();
#endif
  for (uint32_t f = 0; f < threads_; ++f) {
    Fiber& fiber = fibers_[f];
    fiber.wait = Wait::kNone;
    if (!fiber.parked) {
      fiber.context =
          fc::make_fcontext(StackTop(f), kFiberStackBytes, &Worker::FiberMain);
#if defined(KC_TSAN_)
      // The sanitizer's fiber of an abandoned one still holds its frames.
      void*& tsan = waits_[f].tsan;
      if (tsan != nullptr) __tsan_destroy_fiber(tsan);
      tsan = __tsan_create_fiber(0);
      __tsan_switch_to_fiber(tsan, 0);
#endif
      // Into FiberMain, which comes straight back.
      fiber.context = fc::jump_fcontext(fiber.context, this).fctx;
    }
    fiber.parked = false;
    ready_.PushBack(static_cast<int32_t>(f));
  }
  state_->executor = this;
  from_ = kScheduler;
  current_ = ready_.PopFront();
#if defined(KC_TSAN_)
  __tsan_switch_to_fiber(waits_[current_].tsan, 0);
#endif
  // Returns when the last thread has returned (parked, to be resumed by the
  // next block), or one has failed.
  Jump(fibers_[current_].context);
  state_->executor = nullptr;
  return !failed_;
}

void Worker::Step(uint32_t f) {
  current_ = static_cast<int32_t>(f);
  state_->thread = fibers_[f].index;
  const int32_t status = step_(thread_context_, &frame_[f]);
  if (failed_) return;
  if (status == KC_STEP_NO_FRAME) {
    Fail("cannot allocate the frames of %u threads", threads_);
  } else if (status == KC_STEP_RETURNED) {
    fibers_[f].wait = Wait::kDone;
    Retire();
  }
}

// The threads of a block as resumable functions: each step of one runs it
// to its next wait, or to its end.
bool Worker::RunResumableBlock() {
  for (uint32_t f = 0; f < threads_; ++f) {
    fibers_[f].wait = Wait::kNone;
    frame_[f] = nullptr;
  }
  state_->executor = this;
  if (rounds_)
    RunRounds();
  else
    RunSweeps();
  state_->executor = nullptr;
  return !failed_;
}

// The executor goes through the warps in order, and runs each as long as
// it has lanes ready, in lane order: a warp collective's lanes go on while
// their warp's data is warm, as the fibers' queue has them do. A pass
// through the warps that runs no thread leaves the lanes in __activemask
// to be released, or a deadlock.
void Worker::RunSweeps() {
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (uint32_t w = 0; w < warps; ++w) {
    ready_lanes_[w] = warps_[w].present;
    yielded_[w] = 0;
  }
  bool ran = true;
  while (!failed_) {
    if (!ran) {
      if (live_ == 0) break;
      if (!ReleaseActiveMasks()) {
        Deadlock();
        break;
      }
    }
    ran = false;
    for (uint32_t w = 0; w < warps && !failed_; ++w) {
      // The lanes that become ready as these run are the next set.
      for (uint32_t lanes; (lanes = ready_lanes_[w]) != 0 && !failed_;) {
        ready_lanes_[w] = 0;
        ran = true;
        detail::ForLanes(lanes, [&](int lane) {
          if (!failed_) Step(w * kWarpSize + lane);
        });
      }
    }
    for (uint32_t w = 0; w < warps; ++w) {
      ready_lanes_[w] |= yielded_[w];
      ran = ran || yielded_[w] != 0;
      yielded_[w] = 0;
    }
  }
}

// Resumable threads that wait at barriers only, in rounds: each round
// steps every thread that has not returned, in thread order, to its next
// barrier or to its end, and then that barrier is complete. Only the
// bookkeeping of who waits where is left out: all that have not returned
// wait at the barrier.
void Worker::RunRounds() {
  while (!failed_ && live_ != 0) {
    barrier_count_ = 0;
    for (uint32_t f = 0; f < threads_ && !failed_; ++f)
      if (fibers_[f].wait != Wait::kDone) Step(f);
    barrier_result_ = barrier_count_;
  }
}

// Threads as loops. Each round runs threads that can go on to their next
// wait, one call of the round function per region they are at: after a
// barrier every thread that has not returned, after a warp collective the
// lanes of the collectives that the executor has completed, once every
// lane they name that has not returned has made the same request. Where
// every thread is at one region, one call runs them all without asking
// each where it is.
bool Worker::RunLoopBlock() {
  const uint64_t capacity = (threads_ + 15) / 16 * 16;
  void* frames = FrameArena(loops_->frame_bytes * capacity);
  if (loop_waits_ == nullptr)
    loop_waits_.reset(new (std::nothrow) kc_host_loop_wait[kMaxBlockThreads]);
  if (frames == nullptr || loop_waits_ == nullptr) {
    Fail("cannot allocate the frames of %u threads", threads_);
    return false;
  }
  kc_host_loop_wait* waits = loop_waits_.get();
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  const uint32_t width = static_cast<uint32_t>(state_->block_dim.x);
  const uint32_t height = static_cast<uint32_t>(state_->block_dim.y);
  const uint32_t depth = static_cast<uint32_t>(state_->block_dim.z);
  uint8_t* where = where_;
  uint8_t* next = next_;
  memset(where, KC_LOOP_START, threads_);
  int32_t count = 0;
  int32_t result = 0;
  state_->executor = this;
  for (;;) {
    // Where the threads are: most often all at one wait.
    const uint8_t first = where[0];
    bool same = true;
    for (uint32_t t = 1; t < threads_; ++t) same &= where[t] == first;
    if (same && first == KC_LOOP_DONE) break;
    uint32_t go[kMaxBlockThreads / kWarpSize];
    bool collectives = !same || !AtBarrier(first);
    bool all = same;
    if (collectives) {
      for (uint32_t w = 0; w < warps; ++w) {
        if (!CompleteLoopCollectives(w, where, same, go[w])) {
          state_->executor = nullptr;
          return false;
        }
        all = all && go[w] == warps_[w].present;
      }
    }
    if (all) {
      if (!collectives && first != KC_LOOP_START) {
        result = count;
        count = 0;
      }
      round_(thread_context_, frames, capacity, next, first, 0, width, 0,
             height, 0, depth, result, &count, waits);
    } else {
      // The lanes of the completed collectives go on; with none, a barrier
      // that every thread that has not returned waits at completes.
      bool any = false;
      for (uint32_t w = 0; w < warps; ++w) any = any || go[w] != 0;
      bool barrier = !any;
      for (uint32_t t = 0; t < threads_ && barrier; ++t)
        barrier = where[t] == KC_LOOP_DONE || AtBarrier(where[t]);
      if (!any && !barrier) {
        LoopDeadlock(where);
        state_->executor = nullptr;
        return false;
      }
      if (barrier) {
        result = count;
        count = 0;
      }
      // A thread that does not run stays where it is.
      memcpy(next, where, threads_);
      auto runs = [&](uint32_t t) {
        return where[t] != KC_LOOP_DONE &&
               (barrier || ((go[t / kWarpSize] >> (t % kWarpSize)) & 1u) != 0);
      };
      // One call for each run of threads of a row at one region.
      for (uint32_t t = 0; t < threads_;) {
        if (!runs(t)) {
          ++t;
          continue;
        }
        const uint32_t row = t / width;
        uint32_t end = t + 1;
        while (end < (row + 1) * width && where[end] == where[t] && runs(end))
          ++end;
        const uint32_t y = row % height;
        const uint32_t z = row / height;
        round_(thread_context_, frames, capacity, next, where[t],
               t - row * width, end - row * width, y, y + 1, z, z + 1, result,
               &count, waits);
        t = end;
      }
    }
    uint8_t* const ran = where;
    where = next;
    next = ran;
  }
  state_->executor = nullptr;
  return true;
}

bool Worker::AtBarrier(uint8_t region) const {
  return region == KC_LOOP_START ||
         (region < loops_->regions && loops_->barriers[region] != nullptr);
}

bool Worker::CompleteLoopCollectives(uint32_t w, const uint8_t* where,
                                     bool all_waiting, uint32_t& go) {
  const kc_host_loop_wait* waits = loop_waits_.get();
  const uint32_t base = w * kWarpSize;
  const Warp& warp = warps_[w];
  // Every lane, where all the block's threads wait at one collective.
  uint32_t live = all_waiting ? warp.present : 0;
  uint32_t waiting = live;
  if (!all_waiting)
    detail::ForLanes(warp.present, [&](int lane) {
      const uint8_t region = where[base + lane];
      if (region == KC_LOOP_DONE) return;
      live |= 1u << lane;
      if (!AtBarrier(region)) waiting |= 1u << lane;
    });
  go = 0;
  for (uint32_t left = waiting; left != 0;) {
    const int lane = __builtin_ctz(left);
    const kc_host_loop_wait& request = waits[base + lane];
    const auto* op = static_cast<const WarpCollective*>(request.op);
    if (((request.mask >> lane) & 1u) == 0) {
      Fail(
          "thread %s calls %s with mask 0x%08x, which does not name its own "
          "lane %d",
          Text(fibers_[base + lane].index).text, op->name, request.mask, lane);
      return false;
    }
    const uint32_t lanes = request.mask & live;
    bool ready = (lanes & ~waiting) == 0;
    detail::ForLanes(lanes, [&](int other) {
      const kc_host_loop_wait& o = waits[base + other];
      ready = ready && o.op == request.op && o.mask == request.mask &&
              o.size == request.size;
    });
    left &= ready ? ~lanes : ~(1u << lane);
    if (!ready) continue;
    op->compute(lanes, request.size, &loop_waits_[base], request.context);
    go |= lanes;
  }
  return true;
}

// No thread can go on: the executor's record of who waits where, for
// Deadlock's message.
void Worker::LoopDeadlock(const uint8_t* where) {
  const kc_host_loop_wait* waits = loop_waits_.get();
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (uint32_t w = 0; w < warps; ++w) warps_[w].exited = warps_[w].waiting = 0;
  for (uint32_t t = 0; t < threads_; ++t) {
    Warp& warp = warps_[t / kWarpSize];
    const uint32_t lane = t % kWarpSize;
    Fiber& fiber = fibers_[t];
    if (where[t] == KC_LOOP_DONE) {
      fiber.wait = Wait::kDone;
      warp.exited |= 1u << lane;
    } else if (AtBarrier(where[t])) {
      fiber.wait = Wait::kBarrier;
      fiber.barrier = loops_->barriers[where[t]];
    } else {
      fiber.wait = Wait::kWarp;
      warp.waiting |= 1u << lane;
      warp.op[lane] = static_cast<const WarpCollective*>(waits[t].op);
      warp.mask[lane] = waits[t].mask;
      warp.size[lane] = waits[t].size;
    }
  }
  Deadlock();
}

// Started by RunBlock, which it returns to at once: from then on it is
// resumed as every fiber is, by Jump.
void Worker::FiberMain(fc::transfer_t from) {
  Worker* w = static_cast<Worker*>(from.data);
#if defined(KC_TSAN_)
  __tsan_switch_to_fiber(w->scheduler_tsan_, 0);
#endif
  fc::jump_fcontext(from.fctx, nullptr);
  w->Start();
}

fc::transfer_t Worker::OnArrival(fc::transfer_t from) {
  static_cast<Worker*>(from.data)->Arrived(from.fctx);
  return from;
}

// A fiber's life: a thread of one block after another. Between them it
// waits in Exit, so its frames stay as they were: nothing to unwind, and a
// sanitizer sees every call return.
void Worker::Start() {
  for (;;) {
    state_->thread = fibers_[current_].index;
    thread_(thread_context_);
    Exit();
  }
}

void Worker::Arrived(fc::fcontext_t from) {
  if (from_ == kScheduler) {
    scheduler_ = from;
  } else {
    fibers_[from_].context = from;
  }
}

void Worker::SwitchTo(int32_t next) {
  const int32_t self = current_;
  if (next == self) return;
  from_ = self;
  current_ = next;
  fc::fcontext_t to = scheduler_;
#if defined(KC_TSAN_)
  __tsan_switch_to_fiber(
      next == kScheduler ? scheduler_tsan_ : waits_[next].tsan, 0);
#endif
  if (next != kScheduler) to = fibers_[next].context;
  Jump(to);
  // Back in `self` (maybe in a later block), switched to by some other
  // context, which OnArrival has recorded.
  state_->thread = fibers_[self].index;
}

void Worker::Suspend() { SwitchTo(NextReady()); }

int32_t Worker::NextReady() {
  if (ready_.empty() && !ReleaseActiveMasks()) Deadlock();
  return ready_.PopFront();
}

// Every thread that can go on has: now each lane in __activemask knows
// which lanes of its warp reached the same call with it.
bool Worker::ReleaseActiveMasks() {
  bool released = false;
  const uint32_t warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (uint32_t w = 0; w < warps; ++w) {
    Warp& warp = warps_[w];
    uint32_t left = warp.active_mask;
    while (left != 0) {
      const FiberWait& first = waits_[w * kWarpSize + __builtin_ctz(left)];
      uint32_t same = 0;
      detail::ForLanes(left, [&](int lane) {
        const FiberWait& f = waits_[w * kWarpSize + lane];
        if (f.line == first.line && f.column == first.column &&
            strcmp(f.file, first.file) == 0)
          same |= 1u << lane;
      });
      detail::ForLanes(same, [&](int lane) {
        const int32_t f = static_cast<int32_t>(w * kWarpSize + lane);
        waits_[f].active_mask = same;
        fibers_[f].wait = Wait::kNone;
        MakeReady(f);
      });
      left &= ~same;
      released = true;
    }
    warp.active_mask = 0;
  }
  return released;
}

// A thread that returns no longer takes part in barriers and warp
// collectives, as on a GPU since Volta: one that waited for it only may
// complete now.
void Worker::Exit() {
  const int32_t self = current_;
  fibers_[self].wait = Wait::kDone;
  Retire();
  const int32_t next = live_ == 0 ? kScheduler : NextReady();
  fibers_[self].parked = true;
  SwitchTo(next);
}

void Worker::Retire() {
  const int32_t self = current_;
  Warp& warp = warps_[self / kWarpSize];
  warp.exited |= 1u << (self % kWarpSize);
  --live_;
  if (arrived_ > 0 && arrived_ == live_) CompleteBarrier();
  for (uint32_t left = warp.waiting; left != 0;) {
    const int lane = __builtin_ctz(left);
    left &= left - 1;
    if (CompleteCollective(warp, lane)) left &= warp.waiting;
  }
}

// Every thread that has not returned has arrived: the barrier's waiters
// become ready, in thread order.
void Worker::CompleteBarrier() {
  barrier_result_ = barrier_count_;
  arrived_ = 0;
  barrier_count_ = 0;
  const uint32_t words = (threads_ + 63) / 64;
  for (uint32_t i = 0; i < words; ++i) {
    for (uint64_t left = at_barrier_[i]; left != 0; left &= left - 1) {
      const int32_t f = static_cast<int32_t>(i * 64 + __builtin_ctzll(left));
      fibers_[f].wait = Wait::kNone;
      MakeReady(f);
    }
    at_barrier_[i] = 0;
  }
}

bool Worker::ArriveBarrier(const char* name, int predicate) {
  barrier_count_ += predicate;
  if (rounds_) return true;  // the round completes it
  ++arrived_;
  if (arrived_ == live_) {
    // The last one: release the others, and go on.
    CompleteBarrier();
    return false;
  }
  const int32_t self = current_;
  fibers_[self].wait = Wait::kBarrier;
  fibers_[self].barrier = name;
  at_barrier_[self / 64] |= uint64_t{1} << (self % 64);
  return true;
}

int Worker::Barrier(const char* name, int predicate) {
  if (ArriveBarrier(name, predicate)) Suspend();
  // No other barrier completes before this thread arrives at it.
  return barrier_result_;
}

// Completes the collective that `lane` waits in, if every lane it names
// that has not returned waits in it too, with the same mask and value size:
// computes their results and makes them ready (the running thread, if it
// takes part, goes on instead). False when the collective still waits.
bool Worker::CompleteCollective(Warp& warp, int lane) {
  const WarpCollective* op = warp.op[lane];
  const uint32_t mask = warp.mask[lane];
  const uint32_t size = warp.size[lane];
  const uint32_t taking_part = mask & ~warp.exited;
  if ((warp.waiting & taking_part) != taking_part) return false;
  if (warp.mixed) {
    bool same = true;
    detail::ForLanes(taking_part, [&](int other) {
      same = same && warp.op[other] == op && warp.mask[other] == mask &&
             warp.size[other] == size;
    });
    if (!same) return false;
  }
  op->compute(taking_part, size, warp.lanes, warp.context[lane]);
  warp.waiting &= ~taking_part;
  // The others run next, in lane order, while their warp's data is warm.
  const int32_t base = static_cast<int32_t>(&warp - warps_.get()) * kWarpSize;
  uint32_t others = taking_part;
  if (current_ >= base && current_ < base + kWarpSize)
    others &= ~(1u << (current_ - base));
  if (step_ != nullptr) {
    detail::ForLanes(
        others, [&](int other) { fibers_[base + other].wait = Wait::kNone; });
    ready_lanes_[base / kWarpSize] |= others;
    return true;
  }
  while (others != 0) {
    const int other = 31 - __builtin_clz(others);
    others &= ~(1u << other);
    const int32_t f = base + other;
    fibers_[f].wait = Wait::kNone;
    ready_.PushFront(f);
  }
  return true;
}

void Worker::NotOwnLane(const WarpRequest& request) {
  Fail(
      "thread %s calls %s with mask 0x%08x, which does not name its own "
      "lane %d",
      Text(fibers_[current_].index).text, request.op->name, request.mask,
      current_ % kWarpSize);
}

bool Worker::ArriveCollective(const WarpRequest& request, const void* context) {
  const uint32_t self = static_cast<uint32_t>(current_);
  const uint32_t lane = self % kWarpSize;
  Warp& warp = warps_[self / kWarpSize];
  if (((request.mask >> lane) & 1u) == 0) {
    NotOwnLane(request);
    return true;
  }
  const uint32_t mask = request.mask & warp.present;
  if (warp.waiting == 0) {
    warp.mixed = false;
  } else {
    const int first = __builtin_ctz(warp.waiting);
    warp.mixed = warp.mixed || request.op != warp.op[first] ||
                 mask != warp.mask[first] || request.size != warp.size[first];
  }
  warp.op[lane] = request.op;
  warp.mask[lane] = mask;
  warp.size[lane] = request.size;
  WarpLane& slot = warp.lanes[lane];
  detail::CopyValue(slot.in, request.in, request.size);
  slot.a = request.a;
  slot.b = request.b;
  warp.context[lane] = context;
  warp.waiting |= 1u << lane;
  // Most lanes are not the last to arrive: they only wait.
  const uint32_t taking_part = mask & ~warp.exited;
  if ((warp.waiting & taking_part) != taking_part ||
      !CompleteCollective(warp, lane)) {
    fibers_[self].wait = Wait::kWarp;
    return true;
  }
  return false;
}

// The lane's result stays until it calls the next collective.
void Worker::WarpResult(void* out, uint32_t out_size) const {
  detail::CopyValue(out, ResultSlot(), out_size);
}

void Worker::Collective(const WarpRequest& request, const void* context,
                        void* out, uint32_t out_size) {
  if (ArriveCollective(request, context)) Suspend();
  WarpResult(out, out_size);
}

void Worker::ArriveActiveMask(const char* file, uint32_t line,
                              uint32_t column) {
  const int32_t self = current_;
  FiberWait& wait = waits_[self];
  wait.file = file;
  wait.line = line;
  wait.column = column;
  fibers_[self].wait = Wait::kActiveMask;
  warps_[self / kWarpSize].active_mask |= 1u << (self % kWarpSize);
}

uint32_t Worker::ActiveMask(const char* file, uint32_t line, uint32_t column) {
  ArriveActiveMask(file, line, column);
  Suspend();
  return active_mask();
}

bool Worker::ArriveYield() {
  if (step_ != nullptr) {
    yielded_[current_ / kWarpSize] |= 1u << (current_ % kWarpSize);
    return true;
  }
  if (ready_.empty()) return false;
  ready_.PushBack(current_);
  return true;
}

void Worker::Yield() {
  if (ArriveYield()) SwitchTo(ready_.PopFront());
}

void Worker::Fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(message_, sizeof message_, format, args);
  va_end(args);
  failed_ = true;
  if (!on_fibers()) return;
  // Back to the worker for good: this fiber, and every other one that has
  // not returned, is abandoned where it is (and started afresh later).
  from_ = current_;
  current_ = kScheduler;
#if defined(KC_TSAN_)
  __tsan_switch_to_fiber(scheduler_tsan_, 0);
#endif
  Jump(scheduler_);
  __builtin_unreachable();
}

void Worker::Describe(int32_t f, char* out, size_t size) const {
  const Fiber& fiber = fibers_[f];
  const IndexText thread = Text(fiber.index);
  if (fiber.wait == Wait::kBarrier) {
    snprintf(out, size, "thread %s waits at %s", thread.text, fiber.barrier);
    return;
  }
  const Warp& warp = warps_[f / kWarpSize];
  const int lane = f % kWarpSize;
  snprintf(out, size, "thread %s waits in %s with mask 0x%08x", thread.text,
           warp.op[lane]->name, warp.mask[lane]);
}

// No thread can go on. Names one that waits and one it waits for.
void Worker::Deadlock() {
  int32_t waiter = 0;
  while (fibers_[waiter].wait == Wait::kDone) ++waiter;
  int32_t blocker = waiter;
  if (fibers_[waiter].wait == Wait::kBarrier) {
    for (uint32_t f = 0; f < threads_ && blocker == waiter; ++f) {
      const Wait wait = fibers_[f].wait;
      if (wait != Wait::kBarrier && wait != Wait::kDone)
        blocker = static_cast<int32_t>(f);
    }
  } else {
    const Warp& warp = warps_[waiter / kWarpSize];
    const int lane = waiter % kWarpSize;
    detail::ForLanes(warp.mask[lane] & ~warp.exited, [&](int other) {
      const bool same = ((warp.waiting >> other) & 1u) != 0 &&
                        warp.op[other] == warp.op[lane] &&
                        warp.mask[other] == warp.mask[lane] &&
                        warp.size[other] == warp.size[lane];
      if (!same && blocker == waiter) blocker = waiter - lane + other;
    });
  }
  char first[160];
  char second[160];
  Describe(waiter, first, sizeof first);
  Describe(blocker, second, sizeof second);
  Fail(
      "threads wait for each other: %s, and %s; a barrier waits for every "
      "thread of the block that has not returned, a warp function for "
      "every lane it names that has not returned, each making the same call",
      first, second);
}

// Writes "kernel: " and the formatted text to `error`; returns 1, the
// entry's failure.
__attribute__((format(printf, 3, 4))) int32_t Failure(kc_error* error,
                                                      const char* kernel,
                                                      const char* format, ...) {
  const size_t size = sizeof error->message;
  const int n = snprintf(error->message, size, "%s: ", kernel);
  if (n >= 0 && static_cast<size_t>(n) < size) {
    va_list args;
    va_start(args, format);
    vsnprintf(error->message + n, size - static_cast<size_t>(n), format, args);
    va_end(args);
  }
  return 1;
}

Worker* ThisThreadsWorker() {
  static thread_local std::unique_ptr<Worker> worker;
  if (worker == nullptr) worker.reset(new (std::nothrow) Worker());
  return worker.get();
}

// The blocks of `range`, each thread a fiber that calls `thread`, or, with
// `step` instead, a resumable function.
int32_t RunRange(const kc_block_range& range, const char* kernel,
                 kc_error* error, ThreadFunction thread, StepFunction step,
                 bool rounds, const kc_host_thread_loops* loops,
                 const void* context) {
  const kc_dim3 grid = range.launch.grid;
  const kc_dim3 block = range.launch.block;
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  const uint64_t blocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
  if (range.block_begin >= range.block_end || threads == 0) return 0;
  if (threads > kMaxBlockThreads)
    return Failure(error, kernel,
                   "a block of %llu threads (%u, %u, %u) is more than the %u "
                   "threads a block may have",
                   static_cast<unsigned long long>(threads), block.x, block.y,
                   block.z, kMaxBlockThreads);
  if (range.shared_bytes > kMaxDynamicSharedBytes)
    return Failure(error, kernel,
                   "%llu bytes of dynamic shared memory per block is more than "
                   "the CPU target's limit of %llu",
                   static_cast<unsigned long long>(range.shared_bytes),
                   static_cast<unsigned long long>(kMaxDynamicSharedBytes));
  if (range.block_end > blocks)
    return Failure(error, kernel,
                   "blocks %llu to %llu of a grid of %llu blocks",
                   static_cast<unsigned long long>(range.block_begin),
                   static_cast<unsigned long long>(range.block_end),
                   static_cast<unsigned long long>(blocks));
  GridState& state = grid_state;
  if (state.executor != nullptr)
    return Failure(error, kernel, "%s", "a kernel's thread cannot run blocks");
  Worker* worker = ThisThreadsWorker();
  if (worker == nullptr)
    return Failure(error, kernel, "%s", "cannot allocate a block executor");
  char why[256];
  if (!worker->Reserve(static_cast<uint32_t>(threads),
                       step == nullptr && loops == nullptr, why, sizeof why))
    return Failure(error, kernel, "%s", why);
  state.grid_dim = {Index(grid.x), Index(grid.y), Index(grid.z)};
  state.block_dim = {Index(block.x), Index(block.y), Index(block.z)};
  worker->Begin(&state, block, thread, step, rounds, loops, context);
  const uint64_t plane = static_cast<uint64_t>(grid.x) * grid.y;
  for (uint64_t b = range.block_begin; b < range.block_end; ++b) {
    const uint32_t x = static_cast<uint32_t>(b % grid.x);
    const uint32_t y = static_cast<uint32_t>((b % plane) / grid.x);
    const uint32_t z = static_cast<uint32_t>(b / plane);
    state.block = {Index(x), Index(y), Index(z)};
    if (!worker->RunBlock())
      return Failure(error, kernel, "block %s: %s", Text(x, y, z).text,
                     worker->message());
  }
  return 0;
}

}  // namespace

int32_t RunBlocks(const kc_block_range& range, const char* kernel,
                  kc_error* error, ThreadFunction thread, const void* context) {
  return RunRange(range, kernel, error, thread, nullptr, false, nullptr,
                  context);
}

// The calls of kernelc/block.h. Outside a block (no executor on this
// thread) each acts as in a block of one thread.

int BlockBarrier(void* executor, const char* name, int predicate) {
  if (executor == nullptr) return predicate;
  return static_cast<Worker*>(executor)->Barrier(name, predicate);
}

namespace {

// A warp collective of a thread alone. Out of line: its lanes would
// otherwise make every call's frame, on every fiber's stack, 2.5 KiB deep.
__attribute__((noinline)) void WarpCallAlone(const WarpRequest& request,
                                             const void* context, void* out,
                                             uint32_t out_size) {
  WarpLane lanes[kWarpSize];
  memcpy(lanes[0].in, request.in, request.size);
  lanes[0].a = request.a;
  lanes[0].b = request.b;
  request.op->compute(1u, request.size, lanes, context);
  memcpy(out, lanes[0].out, out_size);
}

}  // namespace

void WarpCall(void* executor, const WarpRequest& request, const void* context,
              void* out, uint32_t out_size) {
  if (executor == nullptr) {
    WarpCallAlone(request, context, out, out_size);
    return;
  }
  static_cast<Worker*>(executor)->Collective(request, context, out, out_size);
}

uint32_t WarpActiveMask(void* executor, const char* file, uint32_t line,
                        uint32_t column) {
  if (executor == nullptr) return 1u;
  return static_cast<Worker*>(executor)->ActiveMask(file, line, column);
}

void BlockYield(void* executor) {
  if (executor != nullptr) static_cast<Worker*>(executor)->Yield();
}

void BlockFail(void* executor, const char* message) {
  if (executor != nullptr)
    static_cast<Worker*>(executor)->Fail("%s", message);
}

}  // namespace kc::host

// A resumable thread's side (kernelc/cpu_exec.h). Each runs under the
// executor, on the worker that runs the thread.
using kc::host::Worker;

extern "C" {

int32_t kc_host_run_resumable_blocks(const kc_block_range* range,
                                     const char* kernel, kc_error* error,
                                     kc::host::StepFunction step,
                                     const void* context) {
  return kc::host::RunRange(*range, kernel, error, nullptr, step, false,
                            nullptr, context);
}

int32_t kc_host_run_barrier_blocks(const kc_block_range* range,
                                   const char* kernel, kc_error* error,
                                   kc::host::StepFunction step,
                                   const void* context) {
  return kc::host::RunRange(*range, kernel, error, nullptr, step, true, nullptr,
                            context);
}

int32_t kc_host_run_thread_loops(const kc_block_range* range,
                                 const char* kernel, kc_error* error,
                                 const kc_host_thread_loops* loops,
                                 const void* context) {
  return kc::host::RunRange(*range, kernel, error, nullptr, nullptr, false,
                            loops, context);
}

void* kc_host_thread_frame(uint64_t size) {
  return static_cast<Worker*>(kc::host::grid_state.executor)->Frame(size);
}

bool kc_host_barrier_arrive(void* executor, const char* name, int predicate) {
  return static_cast<Worker*>(executor)->ArriveBarrier(name, predicate != 0);
}

int kc_host_barrier_result(void* executor) {
  return static_cast<Worker*>(executor)->barrier_result();
}

bool kc_host_warp_arrive(void* executor, const kc::host::WarpRequest* request,
                         const void* context, const void** result) {
  Worker* worker = static_cast<Worker*>(executor);
  *result = worker->ResultSlot();
  return worker->ArriveCollective(*request, context);
}

bool kc_host_active_mask_arrive(void* executor, const char* file, uint32_t line,
                                uint32_t column) {
  static_cast<Worker*>(executor)->ArriveActiveMask(file, line, column);
  return true;
}

uint32_t kc_host_active_mask_result(void* executor) {
  return static_cast<Worker*>(executor)->active_mask();
}

bool kc_host_yield_arrive(void* executor) {
  return static_cast<Worker*>(executor)->ArriveYield();
}

bool kc_host_fail_arrive(void* executor, const char* message) {
  static_cast<Worker*>(executor)->Fail("%s", message);
  return true;
}

}  // extern "C"

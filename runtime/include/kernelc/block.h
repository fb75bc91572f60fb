// CUDA's block-level features for sources compiled for the CPU
// (__KERNELC_HOST__) or read by kernelc's frontend (__KERNELC_FRONTEND__):
// __shared__ memory, block barriers and warp intrinsics. Included by
// kernelc/host.h, after the qualifiers and built-in variables it defines; not
// for direct use.
//
// They take effect inside the block executor (kernelc/cpu_exec.h), which runs
// the threads of a block as fibers, one after another, on one OS thread:
//
//  - `__shared__` is `thread_local` (read by the frontend, only a mark). An
//    OS thread runs one block at a time, so each running block has its own
//    copy. At block scope C++ makes a thread_local variable static, as
//    CUDA's __shared__ variables are: one object however many threads run
//    the function. Generated libraries give such variables the
//    local-dynamic TLS model (they are hidden), and the compiler computes
//    the base address once per call of the kernel (checked with clang 14
//    and 19), so loops over shared arrays index a register, as they would
//    a global array. Shared memory keeps its contents from one block to the
//    next on the CPU; CUDA leaves it undefined at the start of a block.
//  - `extern __shared__ T name[]` (dynamic shared memory) declares an array
//    that the generated code defines with KC_HOST_EXTERN_SHARED(T, name),
//    in the declaration's namespace, kMaxDynamicSharedBytes long. On the
//    CPU each such name has storage of its own: two names do not alias, as
//    they do on a GPU.
//  - Barriers and warp intrinsics call into the executor, which suspends
//    the calling thread until every thread they name has arrived or
//    returned, and which reports a barrier that cannot complete as an error
//    of the launch.
//
// A kernel that uses any of these only runs correctly under the executor.
// Outside it (a kernel run by the plain grid loop, which kernelc only does
// for kernels that use none of them) each one acts as in a block of one
// thread.
#ifndef KERNELC_BLOCK_H_
#define KERNELC_BLOCK_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

namespace kc::host {

// CUDA's warp: the unit of the warp intrinsics. Warp w of a block holds the
// threads whose linear index (x fastest, then y, then z) is 32w to 32w + 31.
constexpr int kWarpSize = 32;
// The most threads a block may have, CUDA's limit.
constexpr uint32_t kMaxBlockThreads = 1024;
// The most dynamic shared memory (KC_SHARED_BYTES) a block may use on the
// CPU: the most any current GPU grants one block (227 KiB, sm_90 and
// sm_100). Each `extern __shared__` name costs this much per OS thread that
// runs blocks.
constexpr uint64_t kMaxDynamicSharedBytes = 227 * 1024;
// The most static __shared__ memory a kernel may declare: CUDA's limit. The
// executor cannot see static shared memory (its size is fixed when the
// kernel is compiled), so this is for the frontend to check.
constexpr uint64_t kMaxStaticSharedBytes = 48 * 1024;
// The largest value a warp intrinsic or cooperative-groups collective moves
// per lane.
constexpr size_t kMaxLaneBytes = 32;

// One lane's part in a warp collective: what it brings (`in`, `a`, `b`) and
// what it gets back (`out`).
struct WarpLane {
  alignas(16) unsigned char in[kMaxLaneBytes];
  alignas(16) unsigned char out[kMaxLaneBytes];
  int32_t a;
  int32_t b;
  // The rest of the request of a lane whose block runs as loops
  // (kc_host_run_thread_loops, kernelc/cpu_exec.h), which the lane writes
  // here itself: the collective (a WarpCollective), its mask and value
  // size, and the context its WarpCall named.
  uint32_t mask;
  uint32_t size;
  const void* op;
  const void* context;
};

// A kind of warp collective: its CUDA name (for error messages) and the
// function that computes the `out` of every lane of `mask` from their
// inputs once all have arrived. `size` is the bytes of `in` per lane;
// `context` is what the completing lane's WarpCall named. Lanes of `mask`
// are the warp's lanes that exist (a block whose size is not a multiple of
// 32 has a partial last warp) among those the caller named.
struct WarpCollective {
  const char* name;
  void (*compute)(uint32_t mask, uint32_t size, WarpLane* lanes,
                  const void* context);
};

// One lane's call of a warp collective. The lanes of one collective must
// name the same collective with the same mask and value size.
struct WarpRequest {
  const WarpCollective* op;
  uint32_t mask;  // the lanes taking part, as the caller names them
  uint32_t size;  // bytes at `in`, at most kMaxLaneBytes
  int32_t a;      // operands the collective defines (shuffle lanes...)
  int32_t b;
  const void* in;
};

// The executor's side, defined in block_exec.cc. `executor` is
// grid_state.executor of the calling thread: null outside the executor,
// where each call acts as in a block of one thread.
//
// Waits until every thread of the block that has not returned has called a
// barrier; returns how many passed a non-zero `predicate`. `name` is the
// CUDA function called.
int BlockBarrier(void* executor, const char* name, int predicate);
// Waits until every lane of `request.mask` that has not returned has made
// the same request, then copies this lane's `out_size` bytes of result to
// `out`. The collective computes over those lanes only, with the
// `context` of the lane that completes it, which may be any of them: each
// lane's must live until the collective is complete.
void WarpCall(void* executor, const WarpRequest& request, const void* context,
              void* out, uint32_t out_size);
// The lanes of this warp that reach the same source location while the
// others are blocked or have returned: __activemask's convergence.
uint32_t WarpActiveMask(void* executor, const char* file, uint32_t line,
                        uint32_t column);
// Lets the block's other threads run before this one goes on.
void BlockYield(void* executor);
// Ends the block with an error: `message` says what the kernel did wrong.
// Returns only outside the executor, where there is no block to end.
void BlockFail(void* executor, const char* message);

namespace detail {

// The lanes of `mask` in increasing order.
template <typename F>
inline void ForLanes(uint32_t mask, F&& f) {
  while (mask != 0) {
    const int lane = __builtin_ctz(mask);
    mask &= mask - 1;
    f(lane);
  }
}

// memcpy of a lane's value, whose size is known only at run time: the
// common sizes without a call of the C library's.
inline void CopyValue(void* to, const void* from, uint32_t size) {
  switch (size) {
    case 4:
      memcpy(to, from, 4);
      return;
    case 8:
      memcpy(to, from, 8);
      return;
    default:
      memcpy(to, from, size);
  }
}

template <typename T>
inline T LaneIn(const WarpLane& l) {
  T v;
  memcpy(&v, l.in, sizeof v);
  return v;
}
template <typename T>
inline void SetLaneOut(WarpLane& l, const T& v) {
  memcpy(l.out, &v, sizeof v);
}

// shfl.sync as PTX defines it: `a` is the source lane, delta or lane mask
// (b), `b` the clamp and segment mask (c) that CUDA's __shfl_*_sync compute
// from `width`. A source outside the segment gives the lane its own value;
// so does a source lane that does not take part (undefined in CUDA).
enum class ShuffleMode { kIdx, kUp, kDown, kBfly };
template <ShuffleMode M>
inline void ShuffleCompute(uint32_t mask, uint32_t size, WarpLane* lanes,
                           const void*) {
  ForLanes(mask, [&](int lane) {
    const int32_t bval = lanes[lane].a & 0x1f;
    const int32_t c = lanes[lane].b;
    const int32_t segmask = (c >> 8) & 0x1f;
    const int32_t cval = c & 0x1f;
    const int32_t max_lane = (lane & segmask) | (cval & ~segmask);
    const int32_t min_lane = lane & segmask;
    int32_t j = lane;
    bool in_range = false;
    switch (M) {
      case ShuffleMode::kIdx:
        j = min_lane | (bval & ~segmask);
        in_range = j <= max_lane;
        break;
      case ShuffleMode::kUp:
        j = lane - bval;
        in_range = j >= max_lane;
        break;
      case ShuffleMode::kDown:
        j = lane + bval;
        in_range = j <= max_lane;
        break;
      case ShuffleMode::kBfly:
        j = lane ^ bval;
        in_range = j <= max_lane;
        break;
    }
    if (!in_range || ((mask >> j) & 1u) == 0) j = lane;
    CopyValue(lanes[lane].out, lanes[j].in, size);
  });
}

inline uint32_t BallotOf(uint32_t mask, const WarpLane* lanes) {
  uint32_t bits = 0;
  ForLanes(mask, [&](int lane) {
    if (LaneIn<int>(lanes[lane]) != 0) bits |= 1u << lane;
  });
  return bits;
}
inline void BallotCompute(uint32_t mask, uint32_t, WarpLane* lanes,
                          const void*) {
  const uint32_t bits = BallotOf(mask, lanes);
  ForLanes(mask, [&](int lane) { SetLaneOut(lanes[lane], bits); });
}
inline void AnyCompute(uint32_t mask, uint32_t, WarpLane* lanes, const void*) {
  const int any = BallotOf(mask, lanes) != 0;
  ForLanes(mask, [&](int lane) { SetLaneOut(lanes[lane], any); });
}
inline void AllCompute(uint32_t mask, uint32_t, WarpLane* lanes, const void*) {
  const int all = BallotOf(mask, lanes) == mask;
  ForLanes(mask, [&](int lane) { SetLaneOut(lanes[lane], all); });
}
inline void NoCompute(uint32_t, uint32_t, WarpLane*, const void*) {}

// Lanes whose values are equal bit for bit, as __match_*_sync compare them.
inline uint32_t MatchOf(uint32_t mask, uint32_t size, const WarpLane* lanes,
                        int lane) {
  uint32_t same = 0;
  ForLanes(mask, [&](int other) {
    if (memcmp(lanes[other].in, lanes[lane].in, size) == 0) same |= 1u << other;
  });
  return same;
}
inline void MatchAnyCompute(uint32_t mask, uint32_t size, WarpLane* lanes,
                            const void*) {
  ForLanes(mask, [&](int lane) {
    SetLaneOut(lanes[lane], MatchOf(mask, size, lanes, lane));
  });
}
struct MatchAll {
  uint32_t mask;
  int pred;
};
inline void MatchAllCompute(uint32_t mask, uint32_t size, WarpLane* lanes,
                            const void*) {
  const bool all = MatchOf(mask, size, lanes, __builtin_ctz(mask)) == mask;
  const MatchAll r{all ? mask : 0u, all ? 1 : 0};
  ForLanes(mask, [&](int lane) { SetLaneOut(lanes[lane], r); });
}

// Folds the lanes' values with `op` in lane order and gives every lane the
// result. `Op` is a function object type: default-constructed for the
// intrinsics' operators, else the completing lane's object at `context`.
template <typename T, typename Op, bool kStateful>
inline void ReduceCompute(uint32_t mask, uint32_t, WarpLane* lanes,
                          const void* context) {
  auto fold = [&](const T& x, const T& y) {
    if constexpr (kStateful) {
      return static_cast<T>((*static_cast<const Op*>(context))(x, y));
    } else {
      return static_cast<T>(Op()(x, y));
    }
  };
  T acc = LaneIn<T>(lanes[__builtin_ctz(mask)]);
  ForLanes(mask & (mask - 1),
           [&](int lane) { acc = fold(acc, LaneIn<T>(lanes[lane])); });
  ForLanes(mask, [&](int lane) { SetLaneOut(lanes[lane], acc); });
}

// Prefix folds in lane order: lane k of the mask gets op over lanes 0..k
// (inclusive) or 0..k-1 (exclusive; the first lane gets T{}).
template <typename T, typename Op, bool kInclusive>
inline void ScanCompute(uint32_t mask, uint32_t, WarpLane* lanes,
                        const void* context) {
  const Op& op = *static_cast<const Op*>(context);
  bool first = true;
  T acc{};
  ForLanes(mask, [&](int lane) {
    const T v = LaneIn<T>(lanes[lane]);
    const T before = acc;
    acc = first ? v : static_cast<T>(op(acc, v));
    SetLaneOut(lanes[lane], kInclusive ? acc : (first ? T{} : before));
    first = false;
  });
}

// The operators of __reduce_*_sync. Sums wrap, as the hardware's do.
struct ReduceAddOp {
  static constexpr const char* kName = "__reduce_add_sync";
  unsigned operator()(unsigned x, unsigned y) const { return x + y; }
  int operator()(int x, int y) const {
    return static_cast<int>(static_cast<unsigned>(x) +
                            static_cast<unsigned>(y));
  }
};
struct ReduceMinOp {
  static constexpr const char* kName = "__reduce_min_sync";
  template <typename T>
  T operator()(T x, T y) const {
    return y < x ? y : x;
  }
};
struct ReduceMaxOp {
  static constexpr const char* kName = "__reduce_max_sync";
  template <typename T>
  T operator()(T x, T y) const {
    return x < y ? y : x;
  }
};
struct ReduceAndOp {
  static constexpr const char* kName = "__reduce_and_sync";
  unsigned operator()(unsigned x, unsigned y) const { return x & y; }
};
struct ReduceOrOp {
  static constexpr const char* kName = "__reduce_or_sync";
  unsigned operator()(unsigned x, unsigned y) const { return x | y; }
};
struct ReduceXorOp {
  static constexpr const char* kName = "__reduce_xor_sync";
  unsigned operator()(unsigned x, unsigned y) const { return x ^ y; }
};

template <ShuffleMode M>
inline constexpr WarpCollective kShuffle = {
    M == ShuffleMode::kIdx    ? "__shfl_sync"
    : M == ShuffleMode::kUp   ? "__shfl_up_sync"
    : M == ShuffleMode::kDown ? "__shfl_down_sync"
                              : "__shfl_xor_sync",
    &ShuffleCompute<M>};
inline constexpr WarpCollective kBallot = {"__ballot_sync", &BallotCompute};
inline constexpr WarpCollective kAny = {"__any_sync", &AnyCompute};
inline constexpr WarpCollective kAll = {"__all_sync", &AllCompute};
inline constexpr WarpCollective kSyncWarp = {"__syncwarp", &NoCompute};
inline constexpr WarpCollective kMatchAny = {"__match_any_sync",
                                             &MatchAnyCompute};
inline constexpr WarpCollective kMatchAll = {"__match_all_sync",
                                             &MatchAllCompute};
template <typename T, typename Op>
inline constexpr WarpCollective kReduce = {Op::kName,
                                           &ReduceCompute<T, Op, false>};
template <typename T, typename Op>
inline constexpr WarpCollective kGroupReduce = {"cooperative_groups::reduce",
                                                &ReduceCompute<T, Op, true>};
template <typename T, typename Op, bool kInclusive>
inline constexpr WarpCollective kGroupScan = {
    kInclusive ? "cooperative_groups::inclusive_scan"
               : "cooperative_groups::exclusive_scan",
    &ScanCompute<T, Op, kInclusive>};

// Runs `op` for this lane with `in` as its value and returns its result.
template <typename R, typename T>
__attribute__((always_inline)) inline R Collective(
    const WarpCollective& op, unsigned mask, const T& in, int32_t a = 0,
    int32_t b = 0, const void* context = nullptr) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kMaxLaneBytes,
                "a warp collective moves trivially copyable values of at "
                "most 32 bytes");
  static_assert(std::is_trivially_copyable_v<R> && sizeof(R) <= kMaxLaneBytes,
                "a warp collective returns trivially copyable values of at "
                "most 32 bytes");
  constexpr uint32_t kSize = sizeof(T);
  R out;
  const WarpRequest request{&op, mask, kSize, a, b, &in};
  WarpCall(grid_state.executor, request, context, &out, sizeof out);
  return out;
}

// A shuffle of mode M, with the clamp operand CUDA's __shfl_*_sync pass for
// `width`.
template <ShuffleMode M, typename T>
__attribute__((always_inline)) inline T Shuffle(unsigned mask, const T& var,
                                                int32_t lane, int width) {
  const int32_t segment = (kWarpSize - width) << 8;
  return Collective<T>(kShuffle<M>, mask, var, lane,
                       M == ShuffleMode::kUp ? segment : segment | 0x1f);
}

}  // namespace detail
}  // namespace kc::host

// Storage for `extern __shared__ T name[]`, defined by the generated code in
// the declaration's namespace after the kernel source. An inline variable,
// so that the storage of a name declared in several sources is one array.
#define KC_HOST_EXTERN_SHARED(T, name)         \
  alignas(64) alignas(T) inline thread_local T \
      name[::kc::host::kMaxDynamicSharedBytes / sizeof(T)]

#if defined(__KERNELC_FRONTEND__)
// The frontend reads the mark, and itself reports a __shared__ where CUDA
// allows none (on a parameter, say).
#define __shared__ KC_HOST_MARK_("kc.block_feature", "__shared__")
#else
#define __shared__ thread_local
#endif

// The intrinsics are inlined into the kernel before the optimizer looks at
// their arguments. CUDA code passes values that only some lanes set (`int
// first; if (leader) first = atomicAdd(...); first = __shfl_sync(mask,
// first, leader);`); passed by value through a call, such a value would be
// undefined behaviour that clang may act on.
#define KC_HOST_INTRINSIC_ __attribute__((always_inline)) inline

// The block's barrier and its reductions.
#define KC_BLOCK_FEATURE_(name) KC_HOST_MARK_("kc.block_feature", #name)
KC_BLOCK_FEATURE_(__syncthreads) KC_HOST_INTRINSIC_ void __syncthreads() {
  ::kc::host::BlockBarrier(::kc::host::grid_state.executor, "__syncthreads",
                           0);
}
KC_BLOCK_FEATURE_(__syncthreads_count)
KC_HOST_INTRINSIC_ int __syncthreads_count(int predicate) {
  return ::kc::host::BlockBarrier(::kc::host::grid_state.executor,
                                  "__syncthreads_count", predicate != 0);
}
KC_BLOCK_FEATURE_(__syncthreads_and)
// Whether no thread that has not returned passed a zero predicate.
KC_HOST_INTRINSIC_ int __syncthreads_and(int predicate) {
  return ::kc::host::BlockBarrier(::kc::host::grid_state.executor,
                                  "__syncthreads_and", predicate == 0) == 0;
}
KC_BLOCK_FEATURE_(__syncthreads_or)
KC_HOST_INTRINSIC_ int __syncthreads_or(int predicate) {
  return ::kc::host::BlockBarrier(::kc::host::grid_state.executor,
                                  "__syncthreads_or", predicate != 0) != 0;
}

// Warp intrinsics. `mask` names the lanes that take part; the calling lane
// must be among them, and each of them must make the same call.
KC_BLOCK_FEATURE_(__syncwarp)
KC_HOST_INTRINSIC_ void __syncwarp(unsigned mask = 0xffffffffu) {
  ::kc::host::detail::Collective<int>(::kc::host::detail::kSyncWarp, mask, 0);
}
// The lanes of the warp that reach this call together: those that arrive at
// the same source location while the warp's other lanes wait elsewhere or
// have returned. (Calls written inside the arguments of one macro all have
// the macro's location.)
KC_BLOCK_FEATURE_(__activemask)
#if defined(__clang__)
KC_HOST_INTRINSIC_ unsigned __activemask(const char* file = __builtin_FILE(),
                                         unsigned line = __builtin_LINE(),
                                         unsigned column = __builtin_COLUMN()) {
  return ::kc::host::WarpActiveMask(::kc::host::grid_state.executor, file,
                                    line, column);
}
#else
KC_HOST_INTRINSIC_ unsigned __activemask(const char* file = __builtin_FILE(),
                                         unsigned line = __builtin_LINE()) {
  return ::kc::host::WarpActiveMask(::kc::host::grid_state.executor, file,
                                    line, 0);
}
#endif
KC_BLOCK_FEATURE_(__ballot_sync)
KC_HOST_INTRINSIC_ unsigned __ballot_sync(unsigned mask, int predicate) {
  return ::kc::host::detail::Collective<unsigned>(::kc::host::detail::kBallot,
                                                  mask, predicate);
}
KC_BLOCK_FEATURE_(__any_sync)
KC_HOST_INTRINSIC_ int __any_sync(unsigned mask, int predicate) {
  return ::kc::host::detail::Collective<int>(::kc::host::detail::kAny, mask,
                                             predicate);
}
KC_BLOCK_FEATURE_(__all_sync)
KC_HOST_INTRINSIC_ int __all_sync(unsigned mask, int predicate) {
  return ::kc::host::detail::Collective<int>(::kc::host::detail::kAll, mask,
                                             predicate);
}
template <typename T>
KC_BLOCK_FEATURE_(__shfl_sync)
KC_HOST_INTRINSIC_ T
    __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  return ::kc::host::detail::Shuffle<::kc::host::detail::ShuffleMode::kIdx>(
      mask, var, src_lane, width);
}
template <typename T>
KC_BLOCK_FEATURE_(__shfl_up_sync)
KC_HOST_INTRINSIC_ T
    __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return ::kc::host::detail::Shuffle<::kc::host::detail::ShuffleMode::kUp>(
      mask, var, static_cast<int32_t>(delta), width);
}
template <typename T>
KC_BLOCK_FEATURE_(__shfl_down_sync)
KC_HOST_INTRINSIC_ T
    __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return ::kc::host::detail::Shuffle<::kc::host::detail::ShuffleMode::kDown>(
      mask, var, static_cast<int32_t>(delta), width);
}
template <typename T>
KC_BLOCK_FEATURE_(__shfl_xor_sync)
KC_HOST_INTRINSIC_ T
    __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  return ::kc::host::detail::Shuffle<::kc::host::detail::ShuffleMode::kBfly>(
      mask, var, lane_mask, width);
}
// The lanes of `mask` whose `value` equals this lane's (bit for bit).
template <typename T>
KC_BLOCK_FEATURE_(__match_any_sync)
KC_HOST_INTRINSIC_ unsigned __match_any_sync(unsigned mask, T value) {
  return ::kc::host::detail::Collective<unsigned>(::kc::host::detail::kMatchAny,
                                                  mask, value);
}
// `mask` (and *pred = 1) if every lane of it has the same `value`, else 0
// (and *pred = 0).
template <typename T>
KC_BLOCK_FEATURE_(__match_all_sync)
KC_HOST_INTRINSIC_
    unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  const auto r = ::kc::host::detail::Collective<::kc::host::detail::MatchAll>(
      ::kc::host::detail::kMatchAll, mask, value);
  *pred = r.pred;
  return r.mask;
}
#define KC_HOST_WARP_REDUCE_(name, T, Op)                                     \
  KC_BLOCK_FEATURE_(name) KC_HOST_INTRINSIC_ T name(unsigned mask, T value) { \
    return ::kc::host::detail::Collective<T>(                                 \
        ::kc::host::detail::kReduce<T, ::kc::host::detail::Op>, mask, value); \
  }
KC_HOST_WARP_REDUCE_(__reduce_add_sync, unsigned, ReduceAddOp)
KC_HOST_WARP_REDUCE_(__reduce_add_sync, int, ReduceAddOp)
KC_HOST_WARP_REDUCE_(__reduce_min_sync, unsigned, ReduceMinOp)
KC_HOST_WARP_REDUCE_(__reduce_min_sync, int, ReduceMinOp)
KC_HOST_WARP_REDUCE_(__reduce_max_sync, unsigned, ReduceMaxOp)
KC_HOST_WARP_REDUCE_(__reduce_max_sync, int, ReduceMaxOp)
KC_HOST_WARP_REDUCE_(__reduce_and_sync, unsigned, ReduceAndOp)
KC_HOST_WARP_REDUCE_(__reduce_or_sync, unsigned, ReduceOrOp)
KC_HOST_WARP_REDUCE_(__reduce_xor_sync, unsigned, ReduceXorOp)
#undef KC_HOST_WARP_REDUCE_
// Sleeps on a GPU; on the CPU lets the block's other threads run, so that a
// thread polling shared memory with a back-off sees them make progress.
KC_HOST_INTRINSIC_ void __nanosleep(unsigned) {
  ::kc::host::BlockYield(::kc::host::grid_state.executor);
}
#undef KC_BLOCK_FEATURE_

#endif  // KERNELC_BLOCK_H_

// Stand-in for CUDA's <cooperative_groups.h> when a .cu source is compiled
// for the CPU or read by kernelc's frontend: the groups real kernels use,
// with CUDA's semantics, on top of the barrier and warp functions of
// kernelc/block.h (so they run under the block executor):
//
//   thread_block (this_thread_block()): sync, thread_rank, size,
//     num_threads, group_index, thread_index, dim_threads, group_dim,
//     barrier_arrive/barrier_wait;
//   thread_block_tile<N> (tiled_partition<N>(block or tile), N = 1, 2, 4,
//     8, 16, 32): sync, thread_rank, size, num_threads, meta_group_rank,
//     meta_group_size, shfl, shfl_up, shfl_down, shfl_xor, any, all, ballot,
//     match_any, match_all;
//   thread_group (tiled_partition(group, n), n = 1, 2, 4, 8, 16, 32; or a
//     thread_block or tile converted): sync, thread_rank, size,
//     num_threads, meta_group_rank, meta_group_size;
//   coalesced_group (coalesced_threads()): the lanes of the warp that call
//     it together (kernelc/block.h's __activemask), with the tile's
//     functions, ranks counted among its lanes;
//   grid_group (this_grid()): ranks, sizes and indices; its sync() is a
//     grid-wide barrier, which the CPU target cannot run: a call fails to
//     compile.
//   sync(g), thread_rank(g), group_size(g).
// cooperative_groups/reduce.h and cooperative_groups/scan.h add reduce,
// inclusive_scan and exclusive_scan over tiles and coalesced groups.
#ifndef KERNELC_HOST_COOPERATIVE_GROUPS_H_
#define KERNELC_HOST_COOPERATIVE_GROUPS_H_

#include <kernelc.h>

namespace cooperative_groups {
namespace details {

template <typename T>
struct always_false {
  static constexpr bool value = false;
};

inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
inline unsigned block_rank() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}
inline unsigned lane_id() { return block_rank() % 32u; }
// The lanes of the warp below this one.
inline unsigned lanes_below() { return (1u << lane_id()) - 1u; }
// The lane of the `n`th (from 0) set bit of `mask`, or 32.
inline unsigned nth_lane(unsigned mask, unsigned n) {
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (((mask >> lane) & 1u) == 0) continue;
    if (n-- == 0) return lane;
  }
  return 32;
}
// The bits of `lanes` renumbered by rank among the lanes of `mask`.
inline unsigned pack_lanes(unsigned mask, unsigned lanes) {
  unsigned packed = 0;
  unsigned rank = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (((mask >> lane) & 1u) == 0) continue;
    if ((lanes >> lane) & 1u) packed |= 1u << rank;
    ++rank;
  }
  return packed;
}

constexpr bool valid_tile_size(unsigned n) {
  return n == 1 || n == 2 || n == 4 || n == 8 || n == 16 || n == 32;
}

// The lanes of the tile of `size` threads (a power of two up to 32) that
// holds this thread: the aligned run of `size` lanes, cut at the end of the
// block.
inline unsigned tile_mask(unsigned size) {
  const unsigned base = block_rank() & ~(size - 1u);
  const unsigned left = block_size() - base;
  const unsigned length = left < size ? left : size;
  return (length == 32 ? ~0u : (1u << length) - 1u)
         << (lane_id() & ~(size - 1u));
}

}  // namespace details

// A group whose kind is known at run time: the whole block, or some lanes
// of one warp.
class thread_group {
 public:
  unsigned long long size() const { return num_threads(); }
  unsigned long long num_threads() const {
    return block_ ? details::block_size() : __builtin_popcount(mask_);
  }
  unsigned long long thread_rank() const {
    return block_ ? details::block_rank()
                  : __builtin_popcount(mask_ & details::lanes_below());
  }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  void sync() const {
    if (block_) {
      __syncthreads();
    } else {
      __syncwarp(mask_);
    }
  }
  bool is_valid() const { return block_ || mask_ != 0; }

 protected:
  thread_group(bool block, unsigned mask, unsigned meta_rank,
               unsigned meta_size)
      : block_(block),
        mask_(mask),
        meta_rank_(meta_rank),
        meta_size_(meta_size) {}
  unsigned get_mask() const { return mask_; }

  bool block_;
  unsigned mask_;  // the group's lanes, when not the block
  unsigned meta_rank_;
  unsigned meta_size_;

  friend thread_group tiled_partition(const thread_group& parent,
                                      unsigned tile_size);
};

// The threads of this block.
class thread_block : public thread_group {
 public:
  struct arrival_token {};

  static void sync() { __syncthreads(); }
  arrival_token barrier_arrive() const { return arrival_token(); }
  void barrier_wait(arrival_token&&) const { __syncthreads(); }
  static unsigned size() { return details::block_size(); }
  static unsigned num_threads() { return details::block_size(); }
  static unsigned thread_rank() { return details::block_rank(); }
  static dim3 group_index() { return blockIdx; }
  static dim3 thread_index() { return threadIdx; }
  static dim3 dim_threads() { return blockDim; }
  static dim3 group_dim() { return blockDim; }

 private:
  thread_block() : thread_group(true, 0, 0, 1) {}
  friend thread_block this_thread_block();
};

inline thread_block this_thread_block() { return thread_block(); }

// The lanes of a warp that a collective of a tile or coalesced group names,
// with CUDA's warp functions. Ranks count among `mask`.
class warp_group : public thread_group {
 public:
  using thread_group::thread_group;

  unsigned num_threads() const { return __builtin_popcount(mask_); }
  unsigned size() const { return num_threads(); }
  unsigned thread_rank() const {
    return __builtin_popcount(mask_ & details::lanes_below());
  }
  void sync() const { __syncwarp(mask_); }
  int any(int predicate) const { return __ballot_sync(mask_, predicate) != 0; }
  int all(int predicate) const {
    return __ballot_sync(mask_, predicate) == mask_;
  }
  unsigned ballot(int predicate) const {
    return details::pack_lanes(mask_, __ballot_sync(mask_, predicate));
  }
  template <typename T>
  KC_HOST_INTRINSIC_ unsigned match_any(const T& value) const {
    return details::pack_lanes(mask_, __match_any_sync(mask_, value));
  }
  template <typename T>
  KC_HOST_INTRINSIC_ unsigned match_all(const T& value, int& pred) const {
    return details::pack_lanes(mask_, __match_all_sync(mask_, value, &pred));
  }
  unsigned get_mask() const { return mask_; }
};

// The lanes that reach this call together (the coalesced lanes of a warp).
class coalesced_group : public warp_group {
 public:
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl(const T& value, int src_rank) const {
    const unsigned lane =
        details::nth_lane(mask_, static_cast<unsigned>(src_rank));
    return __shfl_sync(mask_, value, static_cast<int>(lane), 32);
  }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl_down(const T& value, unsigned delta) const {
    if (mask_ == ~0u) return __shfl_down_sync(mask_, value, delta, 32);
    unsigned lane = details::nth_lane(mask_, thread_rank() + delta);
    if (lane >= 32) lane = details::lane_id();
    return __shfl_sync(mask_, value, static_cast<int>(lane), 32);
  }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl_up(const T& value, unsigned delta) const {
    if (mask_ == ~0u) return __shfl_up_sync(mask_, value, delta, 32);
    unsigned lane = details::lane_id();
    if (thread_rank() >= delta)
      lane = details::nth_lane(mask_, thread_rank() - delta);
    return __shfl_sync(mask_, value, static_cast<int>(lane), 32);
  }

 private:
  explicit coalesced_group(unsigned mask) : warp_group(false, mask, 0, 1) {}
#if defined(__clang__)
  friend coalesced_group coalesced_threads(const char*, unsigned, unsigned);
#else
  friend coalesced_group coalesced_threads(const char*, unsigned);
#endif
};

#if defined(__clang__)
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(),
                                         unsigned line = __builtin_LINE(),
                                         unsigned column = __builtin_COLUMN()) {
  return coalesced_group(__activemask(file, line, column));
}
#else
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(),
                                         unsigned line = __builtin_LINE()) {
  return coalesced_group(__activemask(file, line));
}
#endif

// A tile of `Size` consecutive threads of the block, within one warp.
template <unsigned Size, typename ParentT = void>
class thread_block_tile : public warp_group {
  static_assert(details::valid_tile_size(Size),
                "cooperative_groups::thread_block_tile: the CPU target has "
                "tiles of 1, 2, 4, 8, 16 or 32 threads");

 public:
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  static unsigned thread_rank() { return details::block_rank() & (Size - 1); }
  void sync() const { __syncwarp(mask_); }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl(const T& value, int src_rank) const {
    return __shfl_sync(mask_, value, src_rank, Size);
  }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl_up(const T& value, unsigned delta) const {
    return __shfl_up_sync(mask_, value, delta, Size);
  }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl_down(const T& value, unsigned delta) const {
    return __shfl_down_sync(mask_, value, delta, Size);
  }
  template <typename T>
  KC_HOST_INTRINSIC_ T shfl_xor(const T& value, unsigned lane_mask) const {
    return __shfl_xor_sync(mask_, value, static_cast<int>(lane_mask), Size);
  }
  // As CUDA computes them: over the tile's whole lane range, shifted down to
  // the tile's first lane.
  int all(int predicate) const {
    return __ballot_sync(mask_, predicate) == full_mask();
  }
  unsigned ballot(int predicate) const {
    return __ballot_sync(mask_, predicate) >> first_lane();
  }
  template <typename T>
  KC_HOST_INTRINSIC_ unsigned match_any(const T& value) const {
    return __match_any_sync(mask_, value) >> first_lane();
  }
  template <typename T>
  KC_HOST_INTRINSIC_ unsigned match_all(const T& value, int& pred) const {
    return __match_all_sync(mask_, value, &pred) >> first_lane();
  }
  // Made by tiled_partition; a tile of one parent type converts to
  // another, thread_block_tile<Size> (void) included.
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : warp_group(false, details::tile_mask(Size), meta_rank, meta_size) {}
  template <typename OtherParentT>
  thread_block_tile(  // NOLINT: converts implicitly, as CUDA's does
      const thread_block_tile<Size, OtherParentT>& other)
      : warp_group(other) {}

 private:
  static unsigned first_lane() { return details::lane_id() & ~(Size - 1); }
  static unsigned full_mask() {
    return (Size == 32 ? ~0u : (1u << Size) - 1u) << first_lane();
  }
};

// Tiles of `Size` threads of a block or of a larger tile.
template <unsigned Size>
thread_block_tile<Size, thread_block> tiled_partition(const thread_block& g) {
  const unsigned rank = g.thread_rank();
  return thread_block_tile<Size, thread_block>(rank / Size,
                                               (g.size() + Size - 1) / Size);
}
template <unsigned Size, unsigned ParentSize, typename ParentT>
thread_block_tile<Size, thread_block_tile<ParentSize, ParentT>> tiled_partition(
    const thread_block_tile<ParentSize, ParentT>& g) {
  static_assert(Size <= ParentSize,
                "cooperative_groups::tiled_partition: a tile is no larger "
                "than its parent");
  return thread_block_tile<Size, thread_block_tile<ParentSize, ParentT>>(
      g.thread_rank() / Size, ParentSize / Size);
}

// Tiles of `tile_size` threads (1, 2, 4, 8, 16 or 32) of a block or of a
// tile; other sizes end the block with an error.
inline thread_group tiled_partition(const thread_group& parent,
                                    unsigned tile_size) {
  if (!details::valid_tile_size(tile_size)) {
    ::kc::host::BlockFail(
        "cooperative_groups::tiled_partition: the CPU target has tiles of 1, "
        "2, 4, 8, 16 or 32 threads");
    return parent;
  }
  const unsigned rank = static_cast<unsigned>(parent.thread_rank());
  const unsigned size = static_cast<unsigned>(parent.size());
  const unsigned mask =
      details::tile_mask(tile_size) & (parent.block_ ? ~0u : parent.mask_);
  return thread_group(false, mask, rank / tile_size,
                      (size + tile_size - 1) / tile_size);
}

// All threads of the grid. Its sync() is a grid-wide barrier: the CPU target
// runs a grid's blocks a range at a time, so a barrier across all of them
// cannot complete, and a call does not compile.
class grid_group {
 public:
  bool is_valid() const { return true; }
  template <typename T = void>
  KC_HOST_MARK_("kc.grid_sync")
  void sync() const {
    static_assert(details::always_false<T>::value,
                  "cooperative_groups::grid_group::sync: a grid-wide barrier "
                  "cannot run on the CPU target; split the kernel in two at "
                  "the barrier, or build it for the cuda target alone");
  }
  static unsigned long long num_threads() {
    return num_blocks() * details::block_size();
  }
  static unsigned long long size() { return num_threads(); }
  static unsigned long long thread_rank() {
    return block_rank() * details::block_size() + details::block_rank();
  }
  static unsigned long long num_blocks() {
    return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  }
  static unsigned long long block_rank() {
    return (static_cast<unsigned long long>(blockIdx.z) * gridDim.y +
            blockIdx.y) *
               gridDim.x +
           blockIdx.x;
  }
  static dim3 block_index() { return blockIdx; }
  static dim3 thread_index() { return threadIdx; }
  static dim3 dim_blocks() { return gridDim; }
  static dim3 dim_threads() { return blockDim; }
  static dim3 group_dim() { return blockDim; }

 private:
  grid_group() = default;
  friend grid_group this_grid();
};

inline grid_group this_grid() { return grid_group(); }

template <typename Group>
void sync(const Group& g) {
  g.sync();
}
template <typename Group>
auto thread_rank(const Group& g) -> decltype(g.thread_rank()) {
  return g.thread_rank();
}
template <typename Group>
auto group_size(const Group& g) -> decltype(g.num_threads()) {
  return g.num_threads();
}

}  // namespace cooperative_groups

#endif  // KERNELC_HOST_COOPERATIVE_GROUPS_H_

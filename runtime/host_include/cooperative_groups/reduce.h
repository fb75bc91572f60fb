// Stand-in for CUDA's <cooperative_groups/reduce.h> when a .cu source is
// compiled for the CPU or read by kernelc's frontend: reduce over a
// thread_block_tile or coalesced_group, and the operators CUDA defines for
// it. Every thread of the group gets op folded over the group's values in
// rank order (a GPU folds in a tree, so floating-point sums may differ in
// their last bits).
#ifndef KERNELC_HOST_COOPERATIVE_GROUPS_REDUCE_H_
#define KERNELC_HOST_COOPERATIVE_GROUPS_REDUCE_H_

#include <cooperative_groups.h>

namespace cooperative_groups {

template <typename T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <typename T>
struct less {  // the smaller
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <typename T>
struct greater {  // the larger
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <typename T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

// op folded over the values of every thread of `group`, for each of them.
template <typename Group, typename T, typename Op>
KC_HOST_INTRINSIC_ T reduce(const Group& group, const T& value, const Op& op) {
  static_assert(std::is_base_of_v<warp_group, Group>,
                "cooperative_groups::reduce takes a thread_block_tile or a "
                "coalesced_group");
  return ::kc::host::detail::Collective<T>(
      ::kc::host::detail::kGroupReduce<T, Op>, group.get_mask(), value, 0, 0,
      &op);
}

}  // namespace cooperative_groups

#endif  // KERNELC_HOST_COOPERATIVE_GROUPS_REDUCE_H_

// Stand-in for CUDA's <cooperative_groups/scan.h> when a .cu source is
// compiled for the CPU or read by kernelc's frontend: prefix folds over a
// thread_block_tile or coalesced_group, in rank order. The thread of rank k
// gets op folded over ranks 0 to k (inclusive_scan) or 0 to k - 1
// (exclusive_scan, where rank 0 gets T{}); op defaults to plus.
#ifndef KERNELC_HOST_COOPERATIVE_GROUPS_SCAN_H_
#define KERNELC_HOST_COOPERATIVE_GROUPS_SCAN_H_

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cooperative_groups {
namespace details {

template <bool kInclusive, typename Group, typename T, typename Op>
KC_HOST_INTRINSIC_ T scan(const Group& group, const T& value, const Op& op) {
  static_assert(std::is_base_of_v<warp_group, Group>,
                "cooperative_groups scans take a thread_block_tile or a "
                "coalesced_group");
  return ::kc::host::detail::Collective<T>(
      ::kc::host::detail::kGroupScan<T, Op, kInclusive>, group.get_mask(),
      value, 0, 0, &op);
}

}  // namespace details

template <typename Group, typename T, typename Op>
KC_HOST_INTRINSIC_ T inclusive_scan(const Group& group, const T& value,
                                    const Op& op) {
  return details::scan<true>(group, value, op);
}
template <typename Group, typename T>
KC_HOST_INTRINSIC_ T inclusive_scan(const Group& group, const T& value) {
  return details::scan<true>(group, value, plus<T>());
}
template <typename Group, typename T, typename Op>
KC_HOST_INTRINSIC_ T exclusive_scan(const Group& group, const T& value,
                                    const Op& op) {
  return details::scan<false>(group, value, op);
}
template <typename Group, typename T>
KC_HOST_INTRINSIC_ T exclusive_scan(const Group& group, const T& value) {
  return details::scan<false>(group, value, plus<T>());
}

}  // namespace cooperative_groups

#endif  // KERNELC_HOST_COOPERATIVE_GROUPS_SCAN_H_

#include "compiler/model/ptx_abi.h"

#include <fmt/format.h>

#include <algorithm>

namespace kernelc::model {

std::vector<PtxParam> PtxEntryParams(const Kernel& k,
                                     const std::vector<int>& ranks) {
  const bool numba = k.ptx && k.ptx->abi == PtxAbi::kNumba;
  std::vector<PtxParam> out;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    const int rank = i < ranks.size() ? std::max(ranks[i], 0) : 0;
    if (!IsTensor(p.role)) {
      out.push_back({DTypeBytes(p.dtype), fmt::format("'{}'", p.name)});
    } else if (!numba && p.access == Access::kView) {
      out.push_back({8 + 8 * std::max(rank, 1),
                     fmt::format("'{}', a kc::cuda::View<{}>", p.name, rank)});
    } else if (!numba) {
      out.push_back({8, fmt::format("the data of '{}'", p.name)});
    } else {
      // Numba-CUDA's array model (numba/core/datamodel/models.py,
      // ArrayModel), one member per parameter.
      for (const char* member :
           {"meminfo", "parent", "nitems", "itemsize", "data"})
        out.push_back({8, fmt::format("the {} of '{}'", member, p.name)});
      for (int d = 0; d < rank; ++d)
        out.push_back({8, fmt::format("shape[{}] of '{}'", d, p.name)});
      for (int d = 0; d < rank; ++d)
        out.push_back({8, fmt::format("strides[{}] of '{}'", d, p.name)});
    }
  }
  return out;
}

}  // namespace kernelc::model

// The parameter block of a PTX kernel (model::PtxCode): what each `.entry`
// parameter holds under the kernel's ABI, in terms of the spec's
// parameters. The cuda target checks a PTX's `.entry` against it, and the
// CUDA handler passes exactly these.
#ifndef KERNELC_COMPILER_MODEL_PTX_ABI_H_
#define KERNELC_COMPILER_MODEL_PTX_ABI_H_

#include <string>
#include <vector>

#include "compiler/model/model.h"

namespace kernelc::model {

// One `.entry` parameter.
struct PtxParam {
  int bytes = 0;     // its size, as `.param` declares it
  std::string what;  // what it holds, for messages: "the data of 'x'"
};

// The `.entry` parameters of `k` (which has `ptx`), in order, where `ranks`
// (parallel to k.params) holds each tensor's rank as sema found it (a
// pointer's from its shape):
//   kernelc ABI: per parameter as the C++ kernel takes it, a pointer (8
//     bytes), a kc::cuda::View<rank> (8 + 8 * max(rank, 1)), a scalar or
//     derived value (its dtype's size);
//   numba ABI: per tensor, Numba-CUDA's array flattened into 5 + 2 * rank
//     parameters of 8 bytes (meminfo, parent, nitems, itemsize, data,
//     shape..., strides... in bytes); scalars and derived values as above.
std::vector<PtxParam> PtxEntryParams(const Kernel& k,
                                     const std::vector<int>& ranks);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_PTX_ABI_H_

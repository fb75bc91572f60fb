// Running independent tasks at the same time, one per core: the host
// compiles of a build, NVRTC's compiles for each architecture.
#ifndef KERNELC_COMPILER_UTIL_PARALLEL_H_
#define KERNELC_COMPILER_UTIL_PARALLEL_H_

#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstddef>

namespace kernelc {

// Calls task(0) ... task(n - 1), as many at the same time as there are
// cores (in order on this thread when there is one core or one task), and
// returns when all have returned. The tasks must not depend on each other's
// order; each records its own outcome where the caller reads it afterwards.
void ForEachConcurrently(size_t n, llvm::function_ref<void(size_t)> task);

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_PARALLEL_H_

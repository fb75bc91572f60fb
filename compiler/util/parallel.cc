#include "compiler/util/parallel.h"

#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>

#include <algorithm>

namespace kernelc {

void ForEachConcurrently(size_t n, llvm::function_ref<void(size_t)> task) {
  unsigned threads = static_cast<unsigned>(
      std::min<size_t>(n, llvm::hardware_concurrency().compute_thread_count()));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
  for (size_t i = 0; i < n; ++i) pool.async([task, i] { task(i); });
  pool.wait();
}

}  // namespace kernelc

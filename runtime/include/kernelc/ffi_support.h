// What generated XLA FFI handlers share beyond kernelc/ffi.h: XLA's thread
// pool as the runtime takes it (kc_pool), buffers described for the
// batch's planning, and the first error of a batch's elements. Errors are
// kc::ffi::Error's, out of line and cold, so that the checks of a handler
// stay a compare and a branch.
#ifndef KERNELC_FFI_SUPPORT_H_
#define KERNELC_FFI_SUPPORT_H_

#include <stdint.h>

#include <mutex>
#include <utility>

#include "kernelc/batch.h"
#include "kernelc/ffi.h"
#include "kernelc/grid_split.h"
#include "kernelc/launch.h"
#include "kernelc/runtime.h"

namespace kc::ffi_support {

// XLA's intra-op pool as the runtime takes it; `pool` must outlive the
// result.
inline kc_pool Pool(const ffi::ThreadPool& pool) { return pool.Pool(); }

// The bytes of an element of `type`.
inline size_t ByteWidth(ffi::DataType type) {
  switch (type) {
    case ffi::DataType::PRED:
    case ffi::DataType::S8:
    case ffi::DataType::U8:
      return 1;
    case ffi::DataType::S16:
    case ffi::DataType::U16:
    case ffi::DataType::F16:
    case ffi::DataType::BF16:
      return 2;
    case ffi::DataType::S32:
    case ffi::DataType::U32:
    case ffi::DataType::F32:
      return 4;
    case ffi::DataType::S64:
    case ffi::DataType::U64:
    case ffi::DataType::F64:
      return 8;
    default:
      return 0;
  }
}

// `buffer` of a batched call, whose kernel declares `declared_rank`
// dimensions per element, for parameter `name` (a literal).
inline rt::BatchBuffer Buffer(const ffi::AnyBuffer& buffer,
                              size_t declared_rank, const char* name) {
  const rt::Dims dims = buffer.dimensions();
  return rt::BatchBuffer{buffer.untyped_data(),
                         dims.begin(),
                         dims.size(),
                         declared_rank,
                         ByteWidth(buffer.element_type()),
                         static_cast<int32_t>(buffer.element_type()),
                         name};
}

// The first error of the elements of a batch, which run on several threads
// at once.
class FirstError {
 public:
  __attribute__((noinline)) void Keep(ffi::Error error) {
    if (error.success()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_.success()) first_ = std::move(error);
  }
  ffi::Error Take() { return std::move(first_); }

 private:
  std::mutex mu_;
  ffi::Error first_;
};

}  // namespace kc::ffi_support

#endif  // KERNELC_FFI_SUPPORT_H_

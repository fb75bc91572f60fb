// What generated XLA FFI handlers share that needs XLA's types: XLA's
// thread pool as the runtime takes it (kc_pool), buffers described for the
// batch's planning, and errors made from the runtime's messages. One copy
// per library, not per handler: these are plain functions, compiled once
// with the shim (and the templates they use instantiated once, where the
// shim's prelude is precompiled). Error paths are out of line, so that the
// checks of a handler stay a compare and a branch.
#ifndef KERNELC_FFI_SUPPORT_H_
#define KERNELC_FFI_SUPPORT_H_

#include <stdint.h>

#include <mutex>
#include <utility>

#include "kernelc/batch.h"
#include "kernelc/grid_split.h"
#include "kernelc/launch.h"
#include "kernelc/runtime.h"
#include "xla/ffi/api/ffi.h"

namespace kc::ffi_support {

namespace ffi = ::xla::ffi;

inline int64_t PoolThreads(void* self) {
  return static_cast<ffi::ThreadPool*>(self)->num_threads();
}

inline void PoolSchedule(void* self, void (*task)(void*), void* arg) {
  static_cast<ffi::ThreadPool*>(self)->Schedule([task, arg] { task(arg); });
}

// XLA's intra-op pool as the runtime takes it; `pool` must outlive the
// result.
inline kc_pool Pool(ffi::ThreadPool& pool) {
  return kc_pool{&pool, PoolThreads, PoolSchedule};
}

// `buffer` of a batched call, whose kernel declares `declared_rank`
// dimensions per element, for parameter `name` (a literal).
inline rt::BatchBuffer Buffer(const ffi::AnyBuffer& buffer,
                              size_t declared_rank, const char* name) {
  const auto dims = buffer.dimensions();
  return rt::BatchBuffer{buffer.untyped_data(),
                         dims.begin(),
                         dims.size(),
                         declared_rank,
                         ffi::ByteWidth(buffer.element_type()),
                         static_cast<int32_t>(buffer.element_type()),
                         name};
}

__attribute__((noinline, cold)) inline ffi::Error InvalidArgument(
    const char* message) {
  return ffi::Error::InvalidArgument(message);
}

__attribute__((noinline, cold)) inline ffi::Error InvalidArgument(
    const rt::Message& message) {
  return ffi::Error::InvalidArgument(message.c_str());
}

__attribute__((noinline, cold)) inline ffi::Error Internal(
    const rt::Message& message) {
  return ffi::Error::Internal(message.c_str());
}

__attribute__((noinline, cold)) inline ffi::Error Internal(
    const kc_error& error) {
  return ffi::Error::Internal(error.message);
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

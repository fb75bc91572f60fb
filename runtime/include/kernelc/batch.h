// Batched calls: one handler call that runs a kernel once per batch element.
//
// Under jax.vmap the generated ops lower to one custom call whose operands
// and results carry k leading batch dimensions in front of the kernel's
// declared rank (ffi_call's "expand_dims" and "broadcast_all" vmap methods;
// nested vmaps add one leading dimension each). The results hold the whole
// batch shape; an operand's batch dimension is either the same extent or 1,
// which broadcasts it (a byte step of 0). The handler plans the batch from
// its first result, makes one Operand per buffer, and runs the kernel's
// per-element body for each batch index with views of the trailing dims at
// that element's offset. With k = 0 this is a batch of one.
//
// The plan is platform-neutral: the CPU handler calls the kernel once per
// element inside the one handler call; a GPU handler launches per element on
// the same stream (or folds the batch into a free grid dimension). Header-only
// and dependency-free; the buffer and data-type types are the caller's
// (xla::ffi::AnyBuffer and xla::ffi::DataType in generated code).
#ifndef KERNELC_BATCH_H_
#define KERNELC_BATCH_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "kernelc/runtime.h"

namespace kc::rt {

// The most leading batch dimensions a call may carry (nested vmaps).
constexpr int kMaxBatchRank = 16;
// The highest per-element rank whose batch FoldBatch can fold.
constexpr int kMaxFoldRank = 8;

// A dimension list, the shape of AnyBuffer::dimensions().
struct Dims {
  const int64_t* p = nullptr;
  size_t n = 0;
  size_t size() const { return n; }
  int64_t operator[](size_t i) const { return p[i]; }
  const int64_t* begin() const { return p; }
  const int64_t* end() const { return p + n; }
};

// One batch element of a buffer: what a handler body reads of an AnyBuffer.
// Its element count is the product of its dimensions, computed where it is
// read: after the handler has checked the rank, which the compiler then
// knows, the product is a few multiplications rather than a loop.
template <typename DataType>
struct Tensor {
  void* data;
  DataType type;
  Dims dims;
  size_t width;  // bytes per element
  DataType element_type() const { return type; }
  Dims dimensions() const { return dims; }
  void* untyped_data() const { return data; }
  size_t element_count() const {
    size_t count = 1;
    for (size_t d = 0; d < dims.n; ++d) count *= static_cast<size_t>(dims.p[d]);
    return count;
  }
  size_t size_bytes() const { return element_count() * width; }
};

// A whole buffer as the one element of a call without batch dimensions,
// its elements `width` bytes wide; the buffer's rank is not checked here.
template <typename Buffer>
auto Whole(const Buffer& buffer, size_t width)
    -> Tensor<decltype(buffer.element_type())> {
  const auto dims = buffer.dimensions();
  return {buffer.untyped_data(), buffer.element_type(),
          Dims{dims.begin(), dims.size()}, width};
}

// The batch of a call: `rank` leading dimensions of extent `shape`, `count`
// elements in all (1 when rank is 0).
struct Batch {
  int rank = 0;
  int64_t count = 1;
  int64_t shape[kMaxBatchRank] = {};
};

// Plans the batch from a result buffer of the kernel's `declared_rank`.
template <typename Buffer>
std::string PlanBatch(const Buffer& result, size_t declared_rank,
                      Batch* batch) {
  const auto dims = result.dimensions();
  if (dims.size() < declared_rank)
    return Str("a result has rank ", dims.size(), ", less than the declared ",
               declared_rank);
  size_t rank = dims.size() - declared_rank;
  if (rank > static_cast<size_t>(kMaxBatchRank))
    return Str("the call has ", rank, " batch dimensions, more than ",
               kMaxBatchRank);
  batch->rank = static_cast<int>(rank);
  batch->count = 1;
  for (size_t d = 0; d < rank; ++d) {
    batch->shape[d] = dims[d];
    batch->count *= dims[d];
  }
  return std::string();
}

// A buffer seen as a batch of per-element tensors.
template <typename DataType>
struct Operand {
  char* base = nullptr;
  DataType type{};
  Dims dims;         // the trailing (per-element) dimensions
  size_t width = 0;  // bytes per element
  size_t count = 0;  // elements per batch element
  size_t bytes = 0;
  int64_t step[kMaxBatchRank] = {};   // bytes per batch index; 0: broadcast
  int64_t folded[kMaxFoldRank] = {};  // dims after FoldBatch

  // The tensor of batch element `index` (row-major over the batch shape).
  Tensor<DataType> At(const Batch& batch, int64_t index) const {
    int64_t offset = 0;
    for (int d = batch.rank - 1; d >= 0; --d) {
      offset += (index % batch.shape[d]) * step[d];
      index /= batch.shape[d];
    }
    return Tensor<DataType>{base + offset, type, dims, width};
  }
};

// Makes the operand of `buffer` (elements of `width` bytes), whose leading
// dimensions must be the batch's, or 1.
template <typename Buffer, typename DataType>
std::string MakeOperand(const Buffer& buffer, size_t declared_rank,
                        size_t width, const Batch& batch,
                        Operand<DataType>* out) {
  const auto dims = buffer.dimensions();
  const size_t rank = static_cast<size_t>(batch.rank);
  if (dims.size() != declared_rank + rank) {
    if (rank == 0)
      return Str("expects rank ", declared_rank, ", got rank ", dims.size());
    return Str("expects rank ", declared_rank, " after ", rank,
               " batch dimensions, got rank ", dims.size());
  }
  out->base = static_cast<char*>(buffer.untyped_data());
  out->type = buffer.element_type();
  out->dims = Dims{dims.begin() + rank, declared_rank};
  out->width = width;
  out->count = 1;
  for (size_t d = rank; d < dims.size(); ++d) out->count *= dims[d];
  out->bytes = out->count * width;
  int64_t stride = static_cast<int64_t>(out->bytes);
  for (int d = batch.rank - 1; d >= 0; --d) {
    if (dims[d] == batch.shape[d]) {
      out->step[d] = batch.shape[d] == 1 ? 0 : stride;
      stride *= dims[d];
    } else if (dims[d] == 1) {
      out->step[d] = 0;
    } else {
      return Str("has batch dimension ", d, " = ", dims[d], ", expected ",
                 batch.shape[d], " or 1");
    }
  }
  return std::string();
}

// Folds the batch into dimension 0 of every operand, so that one kernel run
// covers the whole batch: for KC_ELEMENTWISE kernels, whose tensors all have
// one shape. Folds only when no operand is broadcast (every batch step is
// the contiguous one) and every per-element rank is 1 to kMaxFoldRank;
// otherwise leaves the batch as it is and returns false.
template <typename DataType>
bool FoldBatch(Batch* batch, Operand<DataType>* const* operands, int n) {
  if (batch->rank == 0 || batch->count <= 1) return false;
  for (int i = 0; i < n; ++i) {
    const Operand<DataType>& o = *operands[i];
    if (o.dims.n < 1 || o.dims.n > static_cast<size_t>(kMaxFoldRank))
      return false;
    int64_t stride = static_cast<int64_t>(o.bytes);
    for (int d = batch->rank - 1; d >= 0; --d) {
      if (batch->shape[d] != 1 && o.step[d] != stride) return false;
      stride *= batch->shape[d];
    }
  }
  for (int i = 0; i < n; ++i) {
    Operand<DataType>& o = *operands[i];
    for (size_t d = 0; d < o.dims.n; ++d) o.folded[d] = o.dims[d];
    o.folded[0] *= batch->count;
    o.dims.p = o.folded;
    o.count *= static_cast<size_t>(batch->count);
    o.bytes *= static_cast<size_t>(batch->count);
  }
  batch->rank = 0;
  batch->count = 1;
  return true;
}

// How many pool threads to hand a batch to besides the caller: none for a
// single element, or when the whole batch moves less than 256 KiB, where a
// hand-off costs more than it saves.
inline int64_t BatchHelpers(int64_t threads, const Batch& batch,
                            size_t element_bytes) {
  if (batch.count <= 1 || threads <= 0) return 0;
  if (element_bytes * static_cast<size_t>(batch.count) < (size_t{1} << 18))
    return 0;
  return threads;
}

// Runs run(i) for every i in [0, count): on the calling thread and on up to
// `helpers` tasks handed to `schedule` (a thread pool's Schedule), which
// claim indices from a shared counter. The caller claims indices too and
// returns once every index has run, so it never waits on a task that the
// pool has not started: a task that starts late finds nothing left to claim
// and touches only the shared counters, which it co-owns. With no helpers
// (or a pool that runs tasks inline) this is a plain loop.
template <typename Schedule, typename Run>
void ParallelFor(int64_t count, int64_t helpers, Schedule&& schedule,
                 Run&& run) {
  if (helpers > count - 1) helpers = count - 1;
  // Alone: the loop, without the shared state (a call of a small op pays
  // for nothing it does not use).
  if (helpers <= 0) {
    for (int64_t i = 0; i < count; ++i) run(i);
    return;
  }
  struct Shared {
    std::atomic<int64_t> next{0};
    int64_t done = 0;  // under mu
    std::mutex mu;
    std::condition_variable all_done;
  };
  auto shared = std::make_shared<Shared>();
  Run* body = &run;
  const int64_t total = count;
  // Claims and runs indices until none is left. `body` is only used for a
  // claimed index, while the caller is still waiting for it.
  auto work = [shared, body, total]() {
    int64_t ran = 0;
    for (int64_t i = shared->next.fetch_add(1); i < total;
         i = shared->next.fetch_add(1)) {
      (*body)(i);
      ++ran;
    }
    if (ran == 0) return;
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->done += ran;
    if (shared->done == total) shared->all_done.notify_all();
  };
  for (int64_t h = 0; h < helpers; ++h) schedule(work);
  work();
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->all_done.wait(lock, [&] { return shared->done == total; });
}

}  // namespace kc::rt

#endif  // KERNELC_BATCH_H_

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
// element inside the one handler call (RunBatch); a GPU handler launches per
// element on the same stream (or folds the batch into a free grid
// dimension). Dependency-free; the handler describes its buffers as plain
// BatchBuffers, so that the planning, the checks and their messages, and
// the CPU's loop over the elements are compiled once, in the prebuilt
// runtime (libkernelc_runtime.a), rather than in every handler. What a
// handler compiles of it is the views below.
#ifndef KERNELC_BATCH_H_
#define KERNELC_BATCH_H_

#include <stddef.h>
#include <stdint.h>

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

// A buffer of a batched call, as the handler describes it: its data, all
// its dimensions (batch ones first), the rank the kernel declares for one
// element, bytes per element, its element type (XLA's code) and the name
// of its parameter, for messages.
struct BatchBuffer {
  void* data;
  const int64_t* dims;
  size_t rank;
  size_t declared_rank;
  size_t width;
  int32_t type;
  const char* name;
};

// A buffer seen as a batch of per-element tensors.
struct Operand {
  char* base = nullptr;
  int32_t type = 0;
  Dims dims;         // the trailing (per-element) dimensions
  size_t width = 0;  // bytes per element
  size_t count = 0;  // elements per batch element
  size_t bytes = 0;
  int64_t step[kMaxBatchRank] = {};   // bytes per batch index; 0: broadcast
  int64_t folded[kMaxFoldRank] = {};  // dims after FoldBatch

  // The tensor of batch element `index` (row-major over the batch shape),
  // its type as DataType (kc::ffi::DataType in generated code).
  template <typename DataType>
  Tensor<DataType> At(const Batch& batch, int64_t index) const {
    int64_t offset = 0;
    for (int d = batch.rank - 1; d >= 0; --d) {
      offset += (index % batch.shape[d]) * step[d];
      index /= batch.shape[d];
    }
    return Tensor<DataType>{base + offset, static_cast<DataType>(type), dims,
                            width};
  }
};

// A tensor whose type is XLA's code, as RunBatch hands it over, with its
// type as DataType.
template <typename DataType>
Tensor<DataType> Typed(const Tensor<int32_t>& t) {
  return Tensor<DataType>{t.data, static_cast<DataType>(t.type), t.dims,
                          t.width};
}

// Plans the batch of a call of kernel `kernel` from its buffer
// `first_result` (its first result, which holds the whole batch shape) and
// makes the operand of each of the `n` buffers into `operands`: the leading
// dimensions of each must be the batch's, or 1 (broadcast). Returns false
// with the reason in `error` ("kernel: parameter 'x' has batch dimension
// ...") when they are not, or a buffer's rank does not fit.
bool PlanBatch(const char* kernel, const BatchBuffer* buffers, int n,
               int first_result, Batch* batch, Operand* operands,
               Message* error);

// Folds the batch into dimension 0 of every operand, so that one kernel run
// covers the whole batch: for KC_ELEMENTWISE kernels, whose tensors all have
// one shape. Folds only when no operand is broadcast (every batch step is
// the contiguous one) and every per-element rank is 1 to kMaxFoldRank;
// otherwise leaves the batch as it is and returns false.
bool FoldBatch(Batch* batch, Operand* const* operands, int n);

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

// Runs run(context, i) for every i in [0, count): on the calling thread and
// on up to `helpers` tasks handed to `pool`, which claim indices from a
// shared counter. The caller claims indices too and returns once every
// index has run, so it never waits on a task that the pool has not started:
// a task that starts late finds nothing left to claim and touches only the
// shared counters, which it co-owns. With no helpers (or a pool that runs
// tasks inline) this is a plain loop.
void ParallelFor(int64_t count, int64_t helpers, const kc_pool& pool,
                 void (*run)(void* context, int64_t index), void* context);

// A batch element as RunBatch hands it to the handler: the tensors of the
// element, one per buffer in their order, and how many threads of the pool
// its grid may use (0: none, the batch is spread over the pool already;
// -1: as many as there are, the pool not asked yet).
using BatchElement = void (*)(void* context, const Tensor<int32_t>* tensors,
                              int64_t pool_threads);

// The CPU handler's batched call: plans the batch (PlanBatch; false with
// the reason in `error` when it does not plan), then calls `element` for
// each batch element, all within this call. A large batch spreads over
// `pool` (BatchHelpers), the caller taking elements too; an elementwise
// kernel's (`fold_elementwise`) batch that stays on one thread folds into
// one element (FoldBatch). `element` may run on several threads at once,
// each element writing only its own results; it keeps its own errors.
bool RunBatch(const char* kernel, const BatchBuffer* buffers, int n,
              int first_result, bool fold_elementwise, const kc_pool& pool,
              BatchElement element, void* context, Message* error);

}  // namespace kc::rt

#endif  // KERNELC_BATCH_H_

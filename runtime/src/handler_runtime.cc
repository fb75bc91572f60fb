// The out-of-line part of the handlers' runtime (kernelc/runtime.h,
// batch.h, grid_split.h): what a handler needs only on an error path, for
// a batch, or for a launch large enough to spread over the pool. Compiled
// once, when kernelc is built, into libkernelc_runtime.a, which kernelc
// carries and links into every generated library with its symbols kept out
// of the library's exports. Before, these were templates over the handler's
// lambdas, and every build compiled and optimized them again for every
// handler; a function pointer and a context pointer cost a launch that
// splits, or a batch element, one indirect call.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "kernelc/batch.h"
#include "kernelc/grid_split.h"
#include "kernelc/runtime.h"

namespace kc::rt {

// ---------------------------------------------------------------------------
// Messages

Message::~Message() { free(data_); }

void Message::Append(const char* text, size_t n) {
  if (size_ + n + 1 > capacity_) {
    size_t capacity = capacity_ < 128 ? 128 : capacity_;
    while (capacity < size_ + n + 1) capacity *= 2;
    char* data = static_cast<char*>(realloc(data_, capacity));
    // Out of memory: keep what fits.
    if (data == nullptr) {
      if (capacity_ == 0) return;
      n = capacity_ - size_ - 1;
    } else {
      data_ = data;
      capacity_ = capacity;
    }
  }
  memcpy(data_ + size_, text, n);
  size_ += n;
  data_[size_] = '\0';
}

Message& Message::operator<<(const char* text) {
  Append(text, strlen(text));
  return *this;
}

Message& Message::operator<<(int64_t value) {
  char text[24];
  const int n = snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  Append(text, static_cast<size_t>(n));
  return *this;
}

Message& Message::operator<<(uint64_t value) {
  char text[24];
  const int n = snprintf(text, sizeof text, "%llu",
                         static_cast<unsigned long long>(value));
  Append(text, static_cast<size_t>(n));
  return *this;
}

Message& Message::operator<<(Shape shape) {
  *this << "(";
  for (size_t i = 0; i < shape.rank; ++i) {
    if (i) *this << ", ";
    *this << shape.dims[i];
  }
  if (shape.rank == 1) *this << ",";
  return *this << ")";
}

Message& Message::Grid(const int64_t* threads, const int64_t* block,
                       int rank) {
  static const char* const kAxis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3 && d < rank; ++d) {
    const int64_t t = threads[d];
    const int64_t b = block[d];
    if (t < 0)
      return *this << "the grid has " << t << " threads along " << kAxis[d];
    const int64_t blocks = t / b + (t % b != 0);
    if (blocks > kMaxGridBlocks[d])
      return *this << "the grid needs " << blocks << " blocks along "
                   << kAxis[d] << ", more than the limit of "
                   << kMaxGridBlocks[d];
  }
  return *this;
}

// ---------------------------------------------------------------------------
// Work shared with the pool

void ParallelFor(int64_t count, int64_t helpers, const kc_pool& pool,
                 void (*run)(void* context, int64_t index), void* context) {
  if (helpers > count - 1) helpers = count - 1;
  // Alone: the loop, without the shared state (a call of a small op pays
  // for nothing it does not use).
  if (helpers <= 0) {
    for (int64_t i = 0; i < count; ++i) run(context, i);
    return;
  }
  // Owned by the caller and by every task handed to the pool, the last to
  // let go deleting it: a task may start after the caller has returned.
  struct Shared {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> owners{0};
    int64_t total = 0;
    void (*run)(void*, int64_t) = nullptr;
    void* context = nullptr;
    int64_t done = 0;  // under mu
    std::mutex mu;
    std::condition_variable all_done;

    // Claims and runs indices until none is left. `run` and `context` are
    // only used for a claimed index, while the caller is still waiting for
    // it.
    void Work() {
      int64_t ran = 0;
      for (int64_t i = next.fetch_add(1); i < total; i = next.fetch_add(1)) {
        run(context, i);
        ++ran;
      }
      if (ran == 0) return;
      std::lock_guard<std::mutex> lock(mu);
      done += ran;
      if (done == total) all_done.notify_all();
    }
    void Release() {
      if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
  };
  Shared* shared = new Shared;
  shared->total = count;
  shared->run = run;
  shared->context = context;
  shared->owners.store(helpers + 1, std::memory_order_relaxed);
  for (int64_t h = 0; h < helpers; ++h)
    pool.schedule(
        pool.self,
        [](void* arg) {
          Shared* s = static_cast<Shared*>(arg);
          s->Work();
          s->Release();
        },
        shared);
  shared->Work();
  {
    std::unique_lock<std::mutex> lock(shared->mu);
    shared->all_done.wait(lock, [&] { return shared->done == shared->total; });
  }
  shared->Release();
}

namespace {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

// Maps part `i` of `parts` of the whole pages inside `span` for writing,
// as writes to them would (RunSplitLaunch). Where the kernel does not know
// MADV_POPULATE_WRITE, or a page cannot be mapped, the writes map them.
void PopulatePart(const kc_span& span, int64_t i, int64_t parts) {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t data = reinterpret_cast<uintptr_t>(span.data);
  const uint64_t first = (data + page - 1) / page * page;
  const uint64_t end = (data + span.bytes) / page * page;
  if (end <= first) return;
  const uint64_t pages = (end - first) / page;
  const uint64_t n = static_cast<uint64_t>(parts);
  const uint64_t from = first + pages * static_cast<uint64_t>(i) / n * page;
  const uint64_t to = first + pages * static_cast<uint64_t>(i + 1) / n * page;
  if (to > from)
    madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
}

// A launch split over the pool, as ParallelFor's context.
struct SplitRun {
  const GridSplit* split;
  uint64_t shared_bytes;
  RangeEntry entry;
  const void* args;
  const kc_span* outputs;
  int32_t output_count;
  std::atomic<bool> failed{false};
  std::mutex mu;
  kc_error first;  // the first failure's, under mu
};

void RunRange(void* context, int64_t i) {
  SplitRun& run = *static_cast<SplitRun*>(context);
  if (run.failed.load(std::memory_order_relaxed)) return;
  for (int32_t k = 0; k < run.output_count; ++k)
    PopulatePart(run.outputs[k], i, run.split->ranges);
  const kc_block_range range = run.split->Range(i, run.shared_bytes);
  kc_error error;
  if (run.entry(&range, &error, run.args) == 0) return;
  std::lock_guard<std::mutex> lock(run.mu);
  if (!run.failed.exchange(true)) run.first = error;
}

}  // namespace

int32_t RunSplitLaunch(const kc_launch& launch, bool block_kernel,
                       uint64_t shared_bytes, int64_t pool_threads,
                       const kc_pool& pool, RangeEntry entry, const void* args,
                       const kc_span* outputs, int32_t output_count,
                       kc_error* error) {
  if (pool_threads < 0) pool_threads = pool.num_threads(pool.self);
  const GridSplit split = SplitGrid(launch, block_kernel, pool_threads);
  if (split.ranges <= 1) {
    const kc_block_range range{launch, 0, split.blocks, shared_bytes};
    return entry(&range, error, args) == 0 ? 0 : 1;
  }
  SplitRun run;
  run.split = &split;
  run.shared_bytes = shared_bytes;
  run.entry = entry;
  run.args = args;
  run.outputs = outputs;
  run.output_count = output_count;
  ParallelFor(split.ranges, split.helpers, pool, RunRange, &run);
  if (!run.failed.load()) return 0;
  *error = run.first;
  error->message[sizeof(error->message) - 1] = '\0';
  return 1;
}

// ---------------------------------------------------------------------------
// Batches

namespace {

// The operand of `buffer` for `batch`, or false with the reason (after
// "parameter 'x' ") in `error`.
bool MakeOperand(const BatchBuffer& buffer, const Batch& batch, Operand* out,
                 Message* error) {
  const size_t rank = static_cast<size_t>(batch.rank);
  const size_t declared_rank = buffer.declared_rank;
  if (buffer.rank != declared_rank + rank) {
    if (rank == 0) {
      *error << "expects rank " << uint64_t{declared_rank} << ", got rank "
             << uint64_t{buffer.rank};
    } else {
      *error << "expects rank " << uint64_t{declared_rank} << " after "
             << uint64_t{rank} << " batch dimensions, got rank "
             << uint64_t{buffer.rank};
    }
    return false;
  }
  const int64_t* dims = buffer.dims;
  out->base = static_cast<char*>(buffer.data);
  out->type = buffer.type;
  out->dims = Dims{dims + rank, declared_rank};
  out->width = buffer.width;
  out->count = 1;
  for (size_t d = rank; d < buffer.rank; ++d)
    out->count *= static_cast<size_t>(dims[d]);
  out->bytes = out->count * buffer.width;
  int64_t stride = static_cast<int64_t>(out->bytes);
  for (int d = batch.rank - 1; d >= 0; --d) {
    if (dims[d] == batch.shape[d]) {
      out->step[d] = batch.shape[d] == 1 ? 0 : stride;
      stride *= dims[d];
    } else if (dims[d] == 1) {
      out->step[d] = 0;
    } else {
      *error << "has batch dimension " << d << " = " << dims[d]
             << ", expected " << batch.shape[d] << " or 1";
      return false;
    }
  }
  return true;
}

}  // namespace

bool PlanBatch(const char* kernel, const BatchBuffer* buffers, int n,
               int first_result, Batch* batch, Operand* operands,
               Message* error) {
  const BatchBuffer& result = buffers[first_result];
  if (result.rank < result.declared_rank) {
    *error << kernel << ": a result has rank " << uint64_t{result.rank}
           << ", less than the declared " << uint64_t{result.declared_rank};
    return false;
  }
  const size_t rank = result.rank - result.declared_rank;
  if (rank > static_cast<size_t>(kMaxBatchRank)) {
    *error << kernel << ": the call has " << uint64_t{rank}
           << " batch dimensions, more than " << kMaxBatchRank;
    return false;
  }
  batch->rank = static_cast<int>(rank);
  batch->count = 1;
  for (size_t d = 0; d < rank; ++d) {
    batch->shape[d] = result.dims[d];
    batch->count *= result.dims[d];
  }
  for (int i = 0; i < n; ++i) {
    Message why;
    if (!MakeOperand(buffers[i], *batch, &operands[i], &why)) {
      *error << kernel << ": parameter '" << buffers[i].name << "' "
             << why.c_str();
      return false;
    }
  }
  return true;
}

bool FoldBatch(Batch* batch, Operand* const* operands, int n) {
  if (batch->rank == 0 || batch->count <= 1) return false;
  for (int i = 0; i < n; ++i) {
    const Operand& o = *operands[i];
    if (o.dims.n < 1 || o.dims.n > static_cast<size_t>(kMaxFoldRank))
      return false;
    int64_t stride = static_cast<int64_t>(o.bytes);
    for (int d = batch->rank - 1; d >= 0; --d) {
      if (batch->shape[d] != 1 && o.step[d] != stride) return false;
      stride *= batch->shape[d];
    }
  }
  for (int i = 0; i < n; ++i) {
    Operand& o = *operands[i];
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

namespace {

// A batch run by RunBatch, as ParallelFor's context.
struct BatchRun {
  const Batch* batch;
  const Operand* operands;
  int n;
  int64_t pool_threads;
  BatchElement element;
  void* context;
};

void RunElement(void* context, int64_t index) {
  const BatchRun& run = *static_cast<const BatchRun*>(context);
  // Most kernels have a few tensors: their views on the stack.
  constexpr int kOnStack = 16;
  Tensor<int32_t> on_stack[kOnStack];
  std::vector<Tensor<int32_t>> on_heap;
  Tensor<int32_t>* tensors = on_stack;
  if (run.n > kOnStack) {
    on_heap.resize(static_cast<size_t>(run.n));
    tensors = on_heap.data();
  }
  for (int i = 0; i < run.n; ++i)
    tensors[i] = run.operands[i].At<int32_t>(*run.batch, index);
  run.element(run.context, tensors, run.pool_threads);
}

}  // namespace

bool RunBatch(const char* kernel, const BatchBuffer* buffers, int n,
              int first_result, bool fold_elementwise, const kc_pool& pool,
              BatchElement element, void* context, Message* error) {
  std::vector<Operand> operands(static_cast<size_t>(n));
  Batch batch;
  if (!PlanBatch(kernel, buffers, n, first_result, &batch, operands.data(),
                 error))
    return false;
  // One element, as outside vmap: no batch to share out, and the grid may
  // use the whole pool.
  int64_t threads = -1;
  int64_t helpers = 0;
  if (batch.count > 1) {
    threads = pool.num_threads(pool.self);
    size_t element_bytes = 0;
    for (const Operand& o : operands) element_bytes += o.bytes;
    helpers = BatchHelpers(threads, batch, element_bytes);
    // Elementwise, and on one thread: the whole batch as one element,
    // folded into dimension 0.
    if (fold_elementwise && helpers == 0) {
      std::vector<Operand*> all;
      for (Operand& o : operands) all.push_back(&o);
      FoldBatch(&batch, all.data(), n);
    }
  }
  // The elements of a batch spread over the pool run their grids alone.
  const BatchRun run{&batch,  operands.data(), n, helpers > 0 ? 0 : threads,
                     element, context};
  ParallelFor(batch.count, helpers, pool, RunElement,
              const_cast<BatchRun*>(&run));
  return true;
}

}  // namespace kc::rt

// A std::thread pool standing in for XLA's intra-op pool (ffi::ThreadPool:
// Schedule and num_threads) in the runtime's tests and benchmarks, and the
// launch the generated handler makes on it: a grid split into ranges of
// blocks (kernelc/grid_split.h) that the caller and pool tasks claim
// (kc::rt::RunSplitLaunch), each run by the kernel's CPU entry
// (kernelc/cpu_exec.h).
#ifndef KERNELC_RUNTIME_STD_POOL_H_
#define KERNELC_RUNTIME_STD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernelc/batch.h"
#include "kernelc/cpu_exec.h"
#include "kernelc/grid_split.h"

namespace kc::testing {

class StdPool {
 public:
  explicit StdPool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~StdPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  StdPool(const StdPool&) = delete;
  StdPool& operator=(const StdPool&) = delete;

  int64_t num_threads() const { return static_cast<int64_t>(threads_.size()); }
  void Schedule(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// `pool` as the runtime takes it (kc_pool), as generated handlers hand it
// XLA's.
inline kc_pool AsPool(StdPool* pool) {
  return kc_pool{
      pool,
      [](void* self) { return static_cast<StdPool*>(self)->num_threads(); },
      [](void* self, void (*task)(void*), void* arg) {
        static_cast<StdPool*>(self)->Schedule([task, arg] { task(arg); });
      }};
}

// Runs a launch of a kernel as a generated handler does: on the calling
// thread when it stays there (`pool` null, or kc::rt::StaysOnCaller), else
// through kc::rt::RunSplitLaunch on `pool`, each range through the
// kernel's entry, the loop's or the block executor's. `thread` calls the
// kernel. Returns the first error's message, or "".
template <typename Thread>
std::string RunLaunch(const kc_launch& launch, bool block_kernel, StdPool* pool,
                      uint64_t shared_bytes, const char* kernel,
                      const Thread& thread) {
  struct Args {
    bool block_kernel;
    const char* kernel;
    const Thread* thread;
  };
  const Args args{block_kernel, kernel, &thread};
  const kc::rt::RangeEntry entry = [](const kc_block_range* r, kc_error* e,
                                      const void* p) -> int32_t {
    const Args& a = *static_cast<const Args*>(p);
    if (a.block_kernel) return kc::host::RunBlocks(*r, a.kernel, e, *a.thread);
    kc::host::RunThreadLoop(r->launch, r->block_begin, r->block_end,
                            *a.thread);
    return 0;
  };
  kc_error error;
  int32_t failed;
  if (pool == nullptr || kc::rt::StaysOnCaller(launch, block_kernel)) {
    const kc_block_range range = kc::rt::WholeLaunch(launch, shared_bytes);
    failed = entry(&range, &error, &args);
  } else {
    failed = kc::rt::RunSplitLaunch(launch, block_kernel, shared_bytes, -1,
                                    AsPool(pool), entry, &args, nullptr, 0,
                                    &error);
  }
  return failed != 0 ? std::string(error.message) : std::string();
}

}  // namespace kc::testing

#endif  // KERNELC_RUNTIME_STD_POOL_H_

#include "compiler/util/progress.h"

#include <utility>

namespace kernelc {

void Progress::Report(ProgressEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sink_) sink_(event);
}

Progress::Stage::Stage(Progress* progress, std::string stage,
                       std::string detail)
    : progress_(progress), start_(std::chrono::steady_clock::now()) {
  event_.stage = std::move(stage);
  event_.detail = std::move(detail);
}

void Progress::Stage::Done() {
  if (progress_ == nullptr) return;
  event_.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  progress_->Report(std::move(event_));
  progress_ = nullptr;
}

}  // namespace kernelc

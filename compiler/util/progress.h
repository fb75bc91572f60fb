// Progress of a long operation, for a front end to show: each stage of a
// build (the frontend, NVRTC for each architecture, each host compile, the
// link) is reported when it finishes, with its wall time. A stage that
// fails is not reported; its error is the pipeline's result.
#ifndef KERNELC_COMPILER_UTIL_PROGRESS_H_
#define KERNELC_COMPILER_UTIL_PROGRESS_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace kernelc {

struct ProgressEvent {
  std::string stage;   // "frontend", "nvrtc sm_80", "host compile", "link"
  std::string detail;  // what it worked on: a source, the library
  double seconds = 0;  // wall time
};

// Passes events on to a front end's sink, one at a time: stages that run
// on several threads report through one Progress. The sink must not
// throw.
class Progress {
 public:
  using Sink = std::function<void(const ProgressEvent&)>;

  explicit Progress(Sink sink) : sink_(std::move(sink)) {}

  void Report(ProgressEvent event);

  // Times a stage from its construction; Done() reports it. A stage of a
  // null Progress (a caller that shows no progress) does nothing.
  class Stage {
   public:
    Stage(Progress* progress, std::string stage, std::string detail);
    void Done();

   private:
    Progress* progress_;
    ProgressEvent event_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  Sink sink_;
  std::mutex mutex_;
};

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_PROGRESS_H_

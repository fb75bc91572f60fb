#include "compiler/util/progress.h"

#include <catch2/catch.hpp>
#include <vector>

namespace kernelc {
namespace {

TEST_CASE("a stage is reported once, when it is done, with its time") {
  std::vector<ProgressEvent> events;
  Progress progress([&](const ProgressEvent& e) { events.push_back(e); });
  Progress::Stage stage(&progress, "frontend", "saxpy.cu");
  CHECK(events.empty());
  stage.Done();
  stage.Done();
  REQUIRE(events.size() == 1);
  CHECK(events[0].stage == "frontend");
  CHECK(events[0].detail == "saxpy.cu");
  CHECK(events[0].seconds >= 0);
}

TEST_CASE("a stage that is not done is not reported") {
  std::vector<ProgressEvent> events;
  Progress progress([&](const ProgressEvent& e) { events.push_back(e); });
  { Progress::Stage failed(&progress, "link", "lib.so"); }
  CHECK(events.empty());
}

TEST_CASE("a stage of no progress does nothing") {
  Progress::Stage stage(nullptr, "link", "lib.so");
  stage.Done();
}

}  // namespace
}  // namespace kernelc

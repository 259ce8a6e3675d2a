// KB_PROFILE=1: the time of every plan step, summed per primitive and printed to stderr when the
// process exits (exclusive of nested plans: a Loop's own time excludes its body's steps);
// KB_PROFILE=2: per primitive and output shape; KB_PROFILE=3: and input shapes.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "core/graph/buffer.h"

namespace kb {

// Times one step while alive; cheap no-op when profiling is off.
class StepTimer {
 public:
  StepTimer(const std::string& op_name, const Buffer& out, const std::vector<const Buffer*>& in);
  ~StepTimer();
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

 private:
  bool on_ = false;
  std::string key_;
  std::chrono::steady_clock::time_point enter_, start_;
  double child_ns_saved_ = 0;
};

}  // namespace kb

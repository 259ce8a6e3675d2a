// Keras 2.2.4's progress output (keras.utils.Progbar and the fit loop's epoch lines) on stderr:
// verbose 1 redraws a bar per batch (on a terminal; elsewhere only the finished bar is written),
// verbose 2 prints a line per epoch, 0 nothing.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace kb::model {

class Progress {
 public:
  Progress(int64_t target, int verbose);
  // `seen` samples done; `values`: the running averages to show, in order.
  void update(int64_t seen, const std::vector<std::pair<std::string, double>>& values);
  // The epoch's end: verbose 1 completes the bar, verbose 2 prints its one line.
  void finish(const std::vector<std::pair<std::string, double>>& values);

 private:
  std::string values_text(const std::vector<std::pair<std::string, double>>& values) const;
  int64_t target_;
  int verbose_;
  bool dynamic_;  // stderr is a terminal
  size_t drawn_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kb::model

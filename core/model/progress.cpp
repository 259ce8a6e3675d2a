#include "core/model/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <unistd.h>

namespace kb::model {

Progress::Progress(int64_t target, int verbose)
    : target_(target),
      verbose_(verbose),
      dynamic_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

std::string Progress::values_text(const std::vector<std::pair<std::string, double>>& values) const {
  std::string out;
  char buf[96];
  for (const auto& [name, v] : values) {
    // Progbar: four decimals, or scientific notation for magnitudes at or below 1e-3.
    std::snprintf(buf, sizeof buf, std::fabs(v) > 1e-3 ? " - %s: %.4f" : " - %s: %.4e",
                  name.c_str(), v);
    out += buf;
  }
  return out;
}

void Progress::update(int64_t seen, const std::vector<std::pair<std::string, double>>& values) {
  if (verbose_ != 1 || target_ <= 0) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int digits = int(std::floor(std::log10(double(target_)))) + 1;
  char head[64];
  std::snprintf(head, sizeof head, "%*lld/%lld [", digits, static_cast<long long>(seen),
                static_cast<long long>(target_));
  const int width = 30;
  int done = int(width * double(seen) / double(target_));
  std::string bar = head;
  if (done > 0) bar += std::string(size_t(done - 1), '=') + (seen < target_ ? ">" : "=");
  bar += std::string(size_t(width - done), '.') + "]";
  char info[96];
  if (seen < target_) {
    double eta = seen > 0 ? elapsed / double(seen) * double(target_ - seen) : 0;
    std::snprintf(info, sizeof info, " - ETA: %ds", int(eta));
  } else {
    // Keras: the time per sample in s, ms or us, whichever reads best.
    double per = elapsed / std::max(1.0, double(target_));
    if (per >= 1)
      std::snprintf(info, sizeof info, " - %.0fs %.0fs/step", elapsed, per);
    else if (per >= 1e-3)
      std::snprintf(info, sizeof info, " - %.0fs %.0fms/step", elapsed, per * 1e3);
    else
      std::snprintf(info, sizeof info, " - %.0fs %.0fus/step", elapsed, per * 1e6);
  }
  // As Keras' Progbar: redrawn in place on a terminal, else only the finished bar.
  if (!dynamic_ && seen < target_) return;
  std::string line = bar + info + values_text(values);
  size_t shown = line.size();
  if (shown < drawn_) line += std::string(drawn_ - shown, ' ');
  drawn_ = shown;
  std::fprintf(stderr, dynamic_ ? "\r%s" : "%s", line.c_str());
  if (seen >= target_) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

void Progress::finish(const std::vector<std::pair<std::string, double>>& values) {
  if (verbose_ == 2) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, " - %.0fs%s\n", elapsed, values_text(values).c_str());
    std::fflush(stderr);
  }
}

}  // namespace kb::model

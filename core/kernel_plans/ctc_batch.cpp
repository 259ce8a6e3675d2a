#include "core/kernel_plans/ctc_batch.h"

#include "core/util/error.h"

namespace kb {

// TensorFlow's rules: labels >= the blank end the sequence, and a real label after them is an
// error.
std::vector<int32_t> ctc_pack_labels(const CtcProblem& p, const int32_t* labels,
                                     const int32_t* label_length, const int32_t* input_length) {
  const char* who = "ctc_batch_cost";
  int64_t blank = p.classes - 1, states = p.states();
  std::vector<int32_t> packed(size_t(p.batch * (2 + states)), int32_t(blank));
  int32_t* lprime = packed.data() + 2 * p.batch;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t n = label_length[b], t = input_length[b];
    check(t >= 0 && t <= p.steps, Status::invalid_argument, who, ": input_length[", b, "] = ", t,
          " is outside [0, ", p.steps, "] (y_pred has ", p.steps, " time steps)");
    check(n >= 0, Status::invalid_argument, who, ": label_length[", b, "] = ", n, " is negative");
    check(n <= p.max_label, Status::invalid_argument, who, ": label_length[", b, "] = ", n,
          " exceeds the ", p.max_label, " labels per entry of y_true");
    check(n > 0, Status::invalid_argument, who, ": label_length[", b,
          "] is 0 (TensorFlow's ctc_loss needs at least one label per entry)");
    check(n <= t, Status::invalid_argument, who, ": input_length[", b, "] = ", t,
          " is shorter than label_length[", b, "] = ", n,
          " (not enough time steps for the labels)");
    const int32_t* row = labels + b * p.max_label;
    int32_t* states_b = lprime + b * states;
    int64_t kept = 0;
    bool ended = false;
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = row[j];
      check(v >= 0, Status::invalid_argument, who, ": y_true[", b, ", ", j, "] = ", v,
            " is negative");
      if (v >= blank) {
        ended = true;
        continue;
      }
      check(!ended, Status::invalid_argument, who, ": y_true[", b, ", ", j, "] = ", v,
            " follows a label >= the blank class ", blank, " within label_length[", b, "]");
      states_b[2 * kept++ + 1] = int32_t(v);
    }
    packed[size_t(b)] = int32_t(t);
    packed[size_t(p.batch + b)] = int32_t(2 * kept + 1);
  }
  return packed;
}

}  // namespace kb

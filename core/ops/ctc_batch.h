// A batch of CTC losses laid out for the per-cell functions of core/util/ctc_recursion.h: the
// label sequences, checked with TensorFlow's rules and packed as extended labels in one int32
// array (a device takes it in one copy), and batch-wide scratch rows. The GPU's kernels and the
// emulated device run the row functions below over every row.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/util/ctc_recursion.h"

namespace kb {

// y_pred (batch, steps, classes), y_true (batch, max_label).
struct CtcProblem {
  int64_t batch = 0, steps = 0, classes = 0, max_label = 0;
  int64_t states() const { return 2 * max_label + 1; }
};

// Scratch for a whole batch: lp and occ (batch, steps, classes), alpha and beta (batch, steps,
// states); beta and occ only for the gradient.
struct CtcScratch {
  double *lp = nullptr, *alpha = nullptr, *beta = nullptr, *occ = nullptr;
};

// A view of the packed labels: steps[batch], u_len[batch], then a row of `states` extended-label
// states per entry.
struct CtcTable {
  int64_t batch = 0, steps = 0, classes = 0, states = 0;
  const int32_t* packed = nullptr;

  // Entry b without scratch.
  KB_HD CtcEntry entry(int64_t b) const {
    CtcEntry e;
    e.steps = packed[b];
    e.classes = classes;
    e.u_len = packed[batch + b];
    e.stride = states;
    e.lprime = packed + 2 * batch + b * states;
    return e;
  }
  // Entry b over the batch's scratch.
  KB_HD CtcEntry entry(const CtcScratch& s, int64_t b) const {
    CtcEntry e = entry(b);
    e.lp = s.lp + b * steps * classes;
    e.alpha = s.alpha + b * steps * states;
    e.beta = s.beta ? s.beta + b * steps * states : nullptr;
    return e;
  }
  KB_HD int64_t rows() const { return batch * steps; }
  // Doubles of scratch, and the scratch inside mem.
  size_t scratch_size(bool grad) const {
    size_t cells = size_t(rows() * classes), st = size_t(rows() * states);
    return grad ? 2 * (cells + st) : cells + st;
  }
  CtcScratch scratch(double* mem, bool grad) const {
    CtcScratch s;
    s.lp = mem;
    s.alpha = s.lp + rows() * classes;
    if (grad) {
      s.beta = s.alpha + rows() * states;
      s.occ = s.beta + rows() * states;
    }
    return s;
  }
};

// Row r = (b, t) of lp, from the logits x (batch, steps, classes).
template <class T>
KB_HD void ctc_log_softmax_at(const CtcTable& q, const CtcScratch& s, const T* x, int64_t r) {
  CtcEntry e = q.entry(s, r / q.steps);
  int64_t t = r % q.steps;
  if (t < e.steps) ctc_log_softmax_row(e, x + r * q.classes, t);
}

// Row r = (b, t) of the gradient (zero past the entry's steps), once alpha and beta are complete.
template <class T>
KB_HD void ctc_grad_at(const CtcTable& q, const CtcScratch& s, T* out, int64_t r) {
  CtcEntry e = q.entry(s, r / q.steps);
  int64_t t = r % q.steps;
  T* row = out + r * q.classes;
  if (t < e.steps)
    ctc_grad_row(e, t, s.occ + r * q.classes, row);
  else
    for (int64_t c = 0; c < q.classes; ++c) row[c] = T(0);
}

// Reads and checks the labels and lengths of every entry (the error names the entry and the
// rule), before anything is computed.
std::vector<int32_t> ctc_pack_labels(const CtcProblem& p, const int32_t* labels,
                                     const int32_t* label_length, const int32_t* input_length);

inline CtcTable ctc_table(const CtcProblem& p, const int32_t* packed) {
  return {p.batch, p.steps, p.classes, p.states(), packed};
}

}  // namespace kb

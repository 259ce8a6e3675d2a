// A batch of CTC losses laid out for the per-cell functions of core/kernel_plans/ctc_recursion.h:
// the label sequences, checked with TensorFlow's rules and packed as extended labels in one int32
// array (a device takes it in one copy), and scratch rows for a chunk of the batch's entries (all
// of them when they fit a budget). The GPU's kernels and the emulated device run the row
// functions below over every row of each chunk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/kernel_plans/ctc_recursion.h"

namespace kb {

// y_pred (batch, steps, classes), y_true (batch, max_label).
struct CtcProblem {
  int64_t batch = 0, steps = 0, classes = 0, max_label = 0;
  int64_t states() const { return 2 * max_label + 1; }
};

// Scratch for a chunk of `count` entries: lp and occ (count, steps, classes), alpha and beta
// (count, steps, states); beta and occ only for the gradient.
struct CtcScratch {
  double *lp = nullptr, *alpha = nullptr, *beta = nullptr, *occ = nullptr;
};

// A view of the packed labels: steps[batch], u_len[batch], then a row of `states` extended-label
// states per entry.
struct CtcTable {
  int64_t batch = 0, steps = 0, classes = 0, states = 0;
  const int32_t* packed = nullptr;
  // The entries [first, first + count) that the scratch and the rows below cover.
  int64_t first = 0, count = 0;

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
  // Entry b (of the chunk) over the chunk's scratch.
  KB_HD CtcEntry entry(const CtcScratch& s, int64_t b) const {
    CtcEntry e = entry(b);
    int64_t k = b - first;
    e.lp = s.lp + k * steps * classes;
    e.alpha = s.alpha + k * steps * states;
    e.beta = s.beta ? s.beta + k * steps * states : nullptr;
    return e;
  }
  // The chunk's rows (entry, step): row r is row first * steps + r of the batch.
  KB_HD int64_t rows() const { return count * steps; }
  // Entries [first_entry, first_entry + n).
  CtcTable chunk(int64_t first_entry, int64_t n) const {
    CtcTable c = *this;
    c.first = first_entry;
    c.count = n;
    return c;
  }
  // Entries per chunk whose scratch fits in max_bytes: at least one, at most the batch.
  int64_t entries_within(size_t max_bytes, bool grad) const {
    size_t per = size_t(steps * (classes + states)) * sizeof(double) * (grad ? 2 : 1);
    size_t n = per ? max_bytes / per : size_t(batch);
    return n < 1 ? 1 : (n > size_t(batch) ? batch : int64_t(n));
  }
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

// Row r = (b, t) of the chunk's lp, from the logits x (batch, steps, classes).
template <class T>
KB_HD void ctc_log_softmax_at(const CtcTable& q, const CtcScratch& s, const T* x, int64_t r) {
  CtcEntry e = q.entry(s, q.first + r / q.steps);
  int64_t t = r % q.steps;
  if (t < e.steps) ctc_log_softmax_row(e, x + (q.first * q.steps + r) * q.classes, t);
}

// Row r = (b, t) of the chunk's gradient (zero past the entry's steps), once alpha and beta are
// complete; out is the batch's.
template <class T>
KB_HD void ctc_grad_at(const CtcTable& q, const CtcScratch& s, T* out, int64_t r) {
  CtcEntry e = q.entry(s, q.first + r / q.steps);
  int64_t t = r % q.steps;
  T* row = out + (q.first * q.steps + r) * q.classes;
  if (t < e.steps)
    ctc_grad_row(e, t, s.occ + r * q.classes, row);
  else
    for (int64_t c = 0; c < q.classes; ++c) row[c] = T(0);
}

// Reads and checks the labels and lengths of every entry (the error names the entry and the
// rule), before anything is computed.
std::vector<int32_t> ctc_pack_labels(const CtcProblem& p, const int32_t* labels,
                                     const int32_t* label_length, const int32_t* input_length);

// The whole batch as one chunk.
inline CtcTable ctc_table(const CtcProblem& p, const int32_t* packed) {
  return {p.batch, p.steps, p.classes, p.states(), packed, 0, p.batch};
}

}  // namespace kb

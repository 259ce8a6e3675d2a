// The CTC loss of one batch entry as per-cell functions, shared by the CPU kernel (one entry per
// thread, cells in order) and the CUDA kernels (a thread per row of log-probabilities or of the
// gradient; a block per entry for the recursions, a thread per state and a barrier per step).
// Everything is in log space and in double precision whatever the storage dtype.
//
// The states of an entry are its extended label l' = blank, l0, blank, l1, ..., blank (u_len =
// 2 * labels + 1). alpha(t, u): log p of the first t + 1 steps ending in state u; beta(t, u): log p
// of the steps after t from state u. A transition from u - 2 skips a blank: allowed onto a label
// that differs from the one before the blank.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/util/host_device.h"

namespace kb {

KB_HD inline double ctc_log_zero() { return -std::numeric_limits<double>::infinity(); }

KB_HD inline double ctc_log_sum_exp(double a, double b) {
  if (a == ctc_log_zero()) return b;
  if (b == ctc_log_zero()) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// One entry's problem and its scratch rows. lp: (steps, classes) log-softmax of the logits;
// alpha, beta: (steps, stride) with stride >= u_len.
struct CtcEntry {
  int64_t steps = 0, classes = 0, u_len = 0, stride = 0;
  const int32_t* lprime = nullptr;
  double* lp = nullptr;
  double* alpha = nullptr;
  double* beta = nullptr;

  KB_HD int64_t blank() const { return classes - 1; }
  KB_HD double y(int64_t t, int64_t u) const { return lp[t * classes + lprime[u]]; }
  KB_HD bool skip_ok(int64_t u) const {
    return u >= 2 && lprime[u] != blank() && lprime[u] != lprime[u - 2];
  }
  KB_HD double& a(int64_t t, int64_t u) const { return alpha[t * stride + u]; }
  KB_HD double& b(int64_t t, int64_t u) const { return beta[t * stride + u]; }
};

// Writes row t of lp from the logits' row (classes values).
template <class T>
KB_HD void ctc_log_softmax_row(const CtcEntry& e, const T* row, int64_t t) {
  double mx = ctc_log_zero();
  for (int64_t c = 0; c < e.classes; ++c) mx = double(row[c]) > mx ? double(row[c]) : mx;
  // An infinite maximum: offset by 0 (a nan in the row makes the whole row nan either way).
  if (mx == ctc_log_zero() || mx == -ctc_log_zero()) mx = 0;
  double sum = 0;
  for (int64_t c = 0; c < e.classes; ++c) sum += std::exp(double(row[c]) - mx);
  double ls = std::log(sum) + mx;
  for (int64_t c = 0; c < e.classes; ++c) e.lp[t * e.classes + c] = double(row[c]) - ls;
}

// alpha(t, u), from row t - 1 of alpha (t > 0).
KB_HD inline double ctc_alpha_at(const CtcEntry& e, int64_t t, int64_t u) {
  if (t == 0) return u < 2 ? e.y(0, u) : ctc_log_zero();
  double s = e.a(t - 1, u);
  if (u >= 1) s = ctc_log_sum_exp(s, e.a(t - 1, u - 1));
  if (e.skip_ok(u)) s = ctc_log_sum_exp(s, e.a(t - 1, u - 2));
  return s == ctc_log_zero() ? ctc_log_zero() : s + e.y(t, u);
}

// beta(t, u), from row t + 1 of beta (t < steps - 1).
KB_HD inline double ctc_beta_at(const CtcEntry& e, int64_t t, int64_t u) {
  if (t == e.steps - 1) return u >= e.u_len - 2 ? 0.0 : ctc_log_zero();
  double s = e.b(t + 1, u) + e.y(t + 1, u);
  if (u + 1 < e.u_len) s = ctc_log_sum_exp(s, e.b(t + 1, u + 1) + e.y(t + 1, u + 1));
  if (u + 2 < e.u_len && e.skip_ok(u + 2))
    s = ctc_log_sum_exp(s, e.b(t + 1, u + 2) + e.y(t + 1, u + 2));
  return s;
}

// log p(label), once alpha is complete.
KB_HD inline double ctc_log_likelihood(const CtcEntry& e) {
  double p = e.a(e.steps - 1, e.u_len - 1);
  return e.u_len > 1 ? ctc_log_sum_exp(p, e.a(e.steps - 1, e.u_len - 2)) : p;
}

// Row t of d(-log p)/d(logits): the softmax minus the posterior occupancy of each class (the
// softmax alone when no alignment has a nonzero probability, as TensorFlow), once alpha and beta
// are complete. occ: scratch for `classes` values.
template <class T>
KB_HD void ctc_grad_row(const CtcEntry& e, int64_t t, double* occ, T* out) {
  double log_p = ctc_log_likelihood(e);
  for (int64_t c = 0; c < e.classes; ++c) occ[c] = ctc_log_zero();
  if (log_p != ctc_log_zero()) {
    for (int64_t u = 0; u < e.u_len; ++u) {
      double v = e.a(t, u) + e.b(t, u);
      if (v != ctc_log_zero()) occ[e.lprime[u]] = ctc_log_sum_exp(occ[e.lprime[u]], v);
    }
  }
  for (int64_t c = 0; c < e.classes; ++c) {
    double g = std::exp(e.lp[t * e.classes + c]);
    if (occ[c] != ctc_log_zero()) g -= std::exp(occ[c] - log_p);
    out[c] = T(g);
  }
}

// The whole entry, one cell at a time (the CPU's order): log p(label) and, with grad, rows
// [0, steps) of the gradient. lp, alpha and beta must hold steps rows.
template <class T>
KB_HD double ctc_entry(const CtcEntry& e, const T* x, double* occ, T* grad) {
  for (int64_t t = 0; t < e.steps; ++t) ctc_log_softmax_row(e, x + t * e.classes, t);
  for (int64_t t = 0; t < e.steps; ++t)
    for (int64_t u = 0; u < e.u_len; ++u) e.a(t, u) = ctc_alpha_at(e, t, u);
  if (!grad) return ctc_log_likelihood(e);
  for (int64_t t = e.steps - 1; t >= 0; --t)
    for (int64_t u = 0; u < e.u_len; ++u) e.b(t, u) = ctc_beta_at(e, t, u);
  for (int64_t t = 0; t < e.steps; ++t) ctc_grad_row(e, t, occ, grad + t * e.classes);
  return ctc_log_likelihood(e);
}

}  // namespace kb

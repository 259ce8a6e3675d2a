// CPU kernels of CtcLoss, CtcLossGrad and CtcDecode (core/ops/ctc_ops.cpp), following
// TensorFlow's CTC loss calculator and CTC decoders (blank = the last class, repeated labels
// merged unless a blank separates them):
// - the loss log-softmaxes each step's logits and runs the forward (and, for the gradient, the
//   backward) recursion over the label with blanks interleaved, in log space and in double
//   precision whatever the storage dtype (core/kernel_plans/ctc_recursion.h, which the GPU runs
//   too);
// - greedy decoding takes each step's first maximum, merges repeats and drops blanks; its score
//   is -sum_t max_c logits;
// - beam search is TensorFlow's prefix beam search (CTCBeamSearchDecoder with merge_repeated):
//   each step's logits are offset by their maximum, a prefix keeps the probabilities of ending
//   in a blank and in its last label, and the beam keeps the beam_width best prefixes. Equal
//   scores may be ordered differently than TensorFlow orders them.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/kernel_plans/ctc_batch.h"
#include "core/util/error.h"

namespace kb::cpu {
namespace {

constexpr double kLogZero = -std::numeric_limits<double>::infinity();

// Runs body(i) for i in [0, n) over the OpenMP threads; the first exception is rethrown here
// (none may leave a parallel region).
template <class F>
void for_each_item(int64_t n, F&& body) {
  std::exception_ptr error;
  std::mutex m;
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          try {
            body(i);
          } catch (...) {
            std::lock_guard<std::mutex> lock(m);
            if (!error) error = std::current_exception();
            return;
          }
        }
      },
      1);
  if (error) std::rethrow_exception(error);
}

template <class T>
const T* typed(const Buffer* b) {
  return b->as<T>();
}

// ---- loss ---------------------------------------------------------------------------------------
// Each entry runs the per-cell functions of core/kernel_plans/ctc_recursion.h in order, over
// scratch of its own size.
template <bool Grad>
Kernel make_ctc_loss(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  CtcProblem p{d[0], d[1], d[2], k.in[1].shape.dims[1]};
  DType dt = k.in[0].dtype;
  return [p, dt](const std::vector<const Buffer*>& in, Buffer& out) {
    std::vector<int32_t> packed =
        ctc_pack_labels(p, typed<int32_t>(in[1]), typed<int32_t>(in[2]), typed<int32_t>(in[3]));
    CtcTable table = ctc_table(p, packed.data());
    auto run = [&](auto zero) {
      using T = decltype(zero);
      const T* x = typed<T>(in[0]);
      T* o = out.as<T>();
      int64_t per = p.steps * p.classes;
      for_each_item(p.batch, [&](int64_t b) {
        CtcEntry e = table.entry(b);
        e.stride = e.u_len;
        std::vector<double> lp(size_t(e.steps * e.classes)), occ(size_t(e.classes));
        std::vector<double> alpha(size_t(e.steps * e.u_len)), beta(Grad ? alpha.size() : 0);
        e.lp = lp.data();
        e.alpha = alpha.data();
        e.beta = beta.data();
        if constexpr (Grad) {
          T* g = o + b * per;
          std::fill(g + e.steps * e.classes, g + per, T(0));
          ctc_entry<T>(e, x + b * per, occ.data(), g);
        } else {
          o[b] = T(-ctc_entry<T>(e, x + b * per, occ.data(), nullptr));
        }
      });
    };
    if (dt == DType::f32)
      run(float{});
    else
      run(double{});
  };
}
KernelRegistrar k1("cpu", ops::CtcLoss, make_ctc_loss<false>);
KernelRegistrar k2("cpu", ops::CtcLossGrad, make_ctc_loss<true>);

// ---- decoding -------------------------------------------------------------------------------
// Log-probabilities of a prefix: ending in a blank, ending in its last label, and their sum.
struct BeamProb {
  double total = kLogZero, blank = kLogZero, label = kLogZero;
  void reset() { total = blank = label = kLogZero; }
};
struct BeamEntry {
  int64_t parent;  // -1 for the root (the empty prefix)
  int64_t label;
  BeamProb oldp, newp;
  bool active() const { return newp.total != kLogZero; }
};

// TensorFlow's prefix beam search over one sequence; writes the top_paths best label sequences
// (repeats merged) and their scores.
class BeamSearch {
 public:
  BeamSearch(int64_t classes, int64_t beam_width)
      : classes_(classes), blank_(classes - 1), width_(size_t(beam_width)) {
    entries_.push_back({-1, -1, {}, {}});
    entries_[0].newp.total = 0;
    entries_[0].newp.blank = 0;
    push(0);
  }

  template <class T>
  void step(const T* row) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes_; ++c) mx = std::max(mx, double(row[c]));
    auto in = [&](int64_t c) { return double(row[c]) - mx; };
    std::vector<int64_t> branches = extract();
    for (int64_t e : branches) entries_[size_t(e)].oldp = entries_[size_t(e)].newp;
    // Existing prefixes: the same prefix one step later.
    for (int64_t e : branches) {
      BeamEntry& b = entries_[size_t(e)];
      if (b.parent >= 0) {
        const BeamEntry& p = entries_[size_t(b.parent)];
        if (p.active()) {
          // Extending the parent by this label: after a blank when the labels repeat.
          double previous = b.label == p.label ? p.oldp.blank : p.oldp.total;
          b.newp.label = ctc_log_sum_exp(b.newp.label, previous);
        }
        b.newp.label += in(b.label);
      }
      b.newp.blank = b.oldp.total + in(blank_);
      b.newp.total = ctc_log_sum_exp(b.newp.blank, b.newp.label);
      push(e);
    }
    // New prefixes: each candidate extended by each label.
    for (int64_t e : branches) {
      if (!candidate(entries_[size_t(e)].oldp)) continue;
      for (int64_t c = 0; c < blank_; ++c) {
        int64_t ci = child(e, c);
        BeamEntry& ch = entries_[size_t(ci)];
        const BeamEntry& b = entries_[size_t(e)];
        if (ch.active()) continue;
        ch.newp.blank = kLogZero;
        double previous = c == b.label ? b.oldp.blank : b.oldp.total;
        ch.newp.label = in(c) + previous;
        ch.newp.total = ch.newp.label;
        if (candidate(ch.newp)) {
          if (heap_.size() == width_) {
            // The lowest prefix leaves the beam.
            entries_[size_t(heap_.front())].newp.reset();
            std::pop_heap(heap_.begin(), heap_.end(), lower());
            heap_.pop_back();
          }
          push(ci);
        } else {
          ch.oldp.reset();
          ch.newp.reset();
        }
      }
    }
  }

  // The n best prefixes (false when the beam holds fewer).
  bool top(size_t n, std::vector<std::vector<int64_t>>& paths, std::vector<double>& scores) {
    if (n > heap_.size()) return false;
    std::vector<int64_t> best = sorted();
    paths.clear();
    scores.clear();
    for (size_t i = 0; i < n; ++i) {
      std::vector<int64_t> seq;
      int64_t prev = -1;
      for (int64_t e = best[i]; entries_[size_t(e)].parent >= 0; e = entries_[size_t(e)].parent) {
        int64_t l = entries_[size_t(e)].label;
        if (l != prev) seq.push_back(l);
        prev = l;
      }
      std::reverse(seq.begin(), seq.end());
      paths.push_back(std::move(seq));
      scores.push_back(entries_[size_t(best[i])].newp.total);
    }
    return true;
  }
  size_t size() const { return heap_.size(); }

 private:
  // Orders a min-heap: the lowest total at the front. A named type, not a lambda behind an auto
  // return: step() above calls lower(), and clang rejects a call to a member function whose
  // deduced return type is not yet known (member bodies are parsed in order).
  struct Lower {
    const std::vector<BeamEntry>* entries;
    bool operator()(int64_t a, int64_t b) const {
      return (*entries)[size_t(a)].newp.total > (*entries)[size_t(b)].newp.total;
    }
  };
  Lower lower() const { return Lower{&entries_}; }
  void push(int64_t e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), lower());
  }
  bool candidate(const BeamProb& p) const {
    return p.total > kLogZero &&
           (heap_.size() < width_ || p.total > entries_[size_t(heap_.front())].newp.total);
  }
  std::vector<int64_t> sorted() const {
    std::vector<int64_t> v = heap_;
    std::stable_sort(v.begin(), v.end(), [this](int64_t a, int64_t b) {
      return entries_[size_t(a)].newp.total > entries_[size_t(b)].newp.total;
    });
    return v;
  }
  // The beam, best first, emptied.
  std::vector<int64_t> extract() {
    std::vector<int64_t> v = sorted();
    heap_.clear();
    return v;
  }
  int64_t child(int64_t parent, int64_t label) {
    auto [it, fresh] = children_.emplace(parent * classes_ + label, int64_t(entries_.size()));
    if (fresh) entries_.push_back({parent, label, {}, {}});
    return it->second;
  }

  int64_t classes_, blank_;
  size_t width_;
  std::vector<BeamEntry> entries_;
  std::vector<int64_t> heap_;
  std::unordered_map<int64_t, int64_t> children_;
};

using Parts = std::vector<std::shared_ptr<Buffer>>;

Kernel make_ctc_decode(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  int64_t batch = d[0], steps = d[1], classes = d[2];
  bool greedy = k.node.attrs.i(attr::greedy) != 0;
  int64_t width = k.node.attrs.i(attr::beam_width);
  int64_t paths = greedy ? 1 : k.node.attrs.i(attr::top_paths);
  std::vector<TensorType> part_types = k.out.parts;
  DType dt = k.in[0].dtype;
  return [=](const std::vector<const Buffer*>& in, Buffer& out) {
    const char* who = "ctc_decode";
    check(steps > 0, Status::invalid_argument, who, ": y_pred has no time steps");
    const int32_t* len = typed<int32_t>(in[1]);
    for (int64_t b = 0; b < batch; ++b)
      check(len[b] >= 0 && len[b] <= steps, Status::invalid_argument, who, ": input_length[", b,
            "] = ", len[b], " is outside [0, ", steps, "] (y_pred has ", steps, " time steps)");
    auto parts = std::make_shared<Parts>();
    for (auto& t : part_types) {
      auto p = std::make_shared<Buffer>(t.dtype, t.shape.dims);
      p->allocate();
      parts->push_back(p);
    }
    for (int64_t p = 0; p < paths; ++p) {
      int64_t* o = (*parts)[size_t(p)]->as<int64_t>();
      std::fill(o, o + batch * steps, int64_t(-1));
    }
    auto run = [&](auto zero) {
      using T = decltype(zero);
      const T* x = typed<T>(in[0]);
      T* score = (*parts)[size_t(paths)]->as<T>();
      for_each_item(batch, [&](int64_t b) {
        const T* xb = x + b * steps * classes;
        if (greedy) {
          int64_t* o = (*parts)[0]->as<int64_t>() + b * steps;
          double sum = 0;
          int64_t prev = -1, n = 0;
          for (int64_t t = 0; t < len[b]; ++t) {
            const T* row = xb + t * classes;
            int64_t m = 0;
            for (int64_t c = 1; c < classes; ++c)
              if (row[c] > row[m]) m = c;
            sum -= double(row[m]);
            if (m != classes - 1 && m != prev) o[n++] = m;
            prev = m;
          }
          score[b] = T(sum);
          return;
        }
        BeamSearch search(classes, width);
        for (int64_t t = 0; t < len[b]; ++t) search.step(xb + t * classes);
        std::vector<std::vector<int64_t>> best;
        std::vector<double> scores;
        check(search.top(size_t(paths), best, scores), Status::invalid_argument, who,
              ": the beam of batch entry ", b, " holds ", search.size(),
              " label sequences, fewer than top_paths = ", paths);
        for (int64_t p = 0; p < paths; ++p) {
          int64_t* o = (*parts)[size_t(p)]->as<int64_t>() + b * steps;
          std::copy(best[size_t(p)].begin(), best[size_t(p)].end(), o);
          score[b * paths + p] = T(scores[size_t(p)]);
        }
      });
    };
    if (dt == DType::f32)
      run(float{});
    else
      run(double{});
    out.storage = std::shared_ptr<void>(parts, parts.get());
  };
}
KernelRegistrar k3("cpu", ops::CtcDecode, make_ctc_decode);

}  // namespace
}  // namespace kb::cpu

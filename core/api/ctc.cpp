// ctc_batch_cost and ctc_decode as Keras' TensorFlow backend builds them: log(y_pred + epsilon)
// (epsilon added, not clipped), then TensorFlow's CTC loss or decoder.
#include "core/api/ctc.h"

#include "core/api/api.h"
#include "core/graph/session.h"
#include "core/ops/build.h"
#include "core/ops/loop.h"
#include "core/util/error.h"

namespace kb::api {
namespace {

int64_t known_rank(const NodePtr& x, const char* who, const char* what) {
  require(x, who, what);
  check(x->shape().rank_known, Status::shape, who, ": the rank of ", what, " is unknown");
  return x->rank();
}

void need_numeric(const NodePtr& x, const char* who, const char* what) {
  check(is_integer(x->dtype()) || is_floating(x->dtype()), Status::dtype, who, ": ", what,
        " must be numeric, got ", dtype_name(x->dtype()));
}

// log(y_pred + epsilon): the logits that TensorFlow's CTC ops receive from Keras.
NodePtr ctc_logits(const NodePtr& y_pred, const char* who) {
  int64_t r = known_rank(y_pred, who, "y_pred");
  check(r == 3, Status::shape, who, ": y_pred must have rank 3 (batch, time, classes), got ",
        y_pred->shape().str());
  check(y_pred->dtype() == DType::f32 || y_pred->dtype() == DType::f64, Status::dtype, who,
        ": y_pred must be float32 or float64, got ", dtype_name(y_pred->dtype()));
  return unary(ops::Log, add(y_pred, scalar_like(y_pred, Session::get().epsilon())));
}

// A (B, 1) length tensor -> (B,) int32 (Keras squeezes the last axis).
NodePtr squeezed_length(const NodePtr& x, const char* who, const char* what) {
  int64_t r = known_rank(x, who, what);
  need_numeric(x, who, what);
  check(r == 2 && x->shape().dims[1] <= 1 && x->shape().dims[1] != 0, Status::shape, who, ": ",
        what, " must have shape (batch, 1), got ", x->shape().str());
  return kb::cast(kb::squeeze(x, 1), DType::i32);
}

}  // namespace

NodePtr ctc_batch_cost(const NodePtr& y_true, const NodePtr& y_pred, const NodePtr& input_length,
                       const NodePtr& label_length) {
  const char* who = "ctc_batch_cost";
  NodePtr logits = ctc_logits(y_pred, who);
  int64_t r = known_rank(y_true, who, "y_true");
  check(r == 2, Status::shape, who, ": y_true must have rank 2 (batch, max_label_length), got ",
        y_true->shape().str());
  need_numeric(y_true, who, "y_true");
  NodePtr labels = kb::cast(y_true, DType::i32);
  NodePtr label_len = squeezed_length(label_length, who, "label_length");
  NodePtr input_len = squeezed_length(input_length, who, "input_length");
  NodePtr loss = make_node(ops::CtcLoss, {logits, labels, label_len, input_len});
  return kb::expand_dims(loss, 1);
}

CtcDecoded ctc_decode(const NodePtr& y_pred, const NodePtr& input_length, bool greedy,
                      int64_t beam_width, int64_t top_paths) {
  const char* who = "ctc_decode";
  NodePtr logits = ctc_logits(y_pred, who);
  int64_t rank = known_rank(input_length, who, "input_length");
  need_numeric(input_length, who, "input_length");
  check(rank == 1, Status::shape, who, ": input_length must have shape (batch,), got ",
        input_length->shape().str());
  if (!greedy) {
    check(beam_width >= 1, Status::invalid_argument, who, ": beam_width must be at least 1, got ",
          beam_width);
    check(top_paths >= 1, Status::invalid_argument, who, ": top_paths must be at least 1, got ",
          top_paths);
    check(top_paths <= beam_width, Status::invalid_argument, who, ": top_paths (", top_paths,
          ") must not exceed beam_width (", beam_width, ")");
  }
  int64_t paths = greedy ? 1 : top_paths;
  NodePtr node = make_node(ops::CtcDecode, {logits, kb::cast(input_length, DType::i32)},
                           {{attr::greedy, int64_t(greedy)},
                            {attr::beam_width, greedy ? int64_t(1) : beam_width},
                            {attr::top_paths, paths}});
  CtcDecoded r;
  // Each path comes as (B, T) padded with -1; as TensorFlow's dense decoding it is as wide as
  // its longest sequence (a width known when the function runs).
  for (int64_t p = 0; p < paths; ++p)
    r.decoded.push_back(make_node(ops::TrimTrailing, {tuple_get(node, p)},
                                  {{attr::axis, int64_t(1)}, {attr::value, -1.0}}));
  r.log_prob = tuple_get(node, paths);
  return r;
}

}  // namespace kb::api

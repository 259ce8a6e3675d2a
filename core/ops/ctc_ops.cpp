// CTC primitives (connectionist temporal classification, as TensorFlow's ctc_loss and CTC
// decoders), blank = the last class:
// - CtcLoss(logits (B, T, C), labels (B, L) int32, label_length (B,) int32,
//   input_length (B,) int32) -> (B,): -log p(label | softmax(logits)) over the first
//   input_length[b] steps;
// - CtcLossGrad(same inputs) -> (B, T, C): its gradient with respect to the logits (softmax minus
//   the posterior occupancy of each class, zero past input_length[b]); differentiating it is an
//   error (TensorFlow has no second derivative of ctc_loss either);
// - CtcDecode(logits (B, T, C), input_length (B,) int32), attrs greedy, beam_width, top_paths ->
//   a tuple of top_paths int64 (B, T) label sequences padded with -1, then the (B, top_paths)
//   log-probabilities in the logits' dtype (taken apart with TupleGet).
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

// The batch size that a and b agree on (-1 when both are unknown).
int64_t same_batch(int64_t a, int64_t b, const char* who, const char* what_a, const Shape& sa,
                   const char* what_b, const Shape& sb) {
  check(a < 0 || b < 0 || a == b, Status::shape, who, ": the batch sizes of ", what_a, " ",
        sa.str(), " and ", what_b, " ", sb.str(), " differ");
  return a >= 0 ? a : b;
}

void check_logits(const TensorType& t, const char* who) {
  check(t.dtype == DType::f32 || t.dtype == DType::f64, Status::dtype, who,
        ": y_pred must be float32 or float64, got ", dtype_name(t.dtype));
  check(t.shape.rank_known && t.shape.rank() == 3, Status::shape, who,
        ": y_pred must have rank 3 (batch, time, classes), got ", t.shape.str());
  check(t.shape.dims[2] != 0, Status::shape, who, ": y_pred has no classes (", t.shape.str(), ")");
}

void check_lengths(const TensorType& t, const char* who, const char* what) {
  check(t.dtype == DType::i32, Status::dtype, who, ": ", what, " must be int32, got ",
        dtype_name(t.dtype));
  check(t.shape.rank_known && t.shape.rank() == 1, Status::shape, who, ": ", what,
        " must have rank 1 (batch,), got ", t.shape.str());
}

// logits, labels, label_length, input_length -> the batch size.
int64_t check_loss_inputs(const Ins& in) {
  const char* who = "ctc_batch_cost";
  check(in.size() == 4, Status::internal, who, ": expected 4 inputs");
  check_logits(in[0], who);
  check(in[1].dtype == DType::i32, Status::dtype, who, ": labels must be int32, got ",
        dtype_name(in[1].dtype));
  check(in[1].shape.rank_known && in[1].shape.rank() == 2, Status::shape, who,
        ": y_true must have rank 2 (batch, max_label_length), got ", in[1].shape.str());
  check_lengths(in[2], who, "label_length");
  check_lengths(in[3], who, "input_length");
  int64_t b = in[0].shape.dims[0];
  b = same_batch(b, in[1].shape.dims[0], who, "y_pred", in[0].shape, "y_true", in[1].shape);
  b = same_batch(b, in[2].shape.dims[0], who, "y_pred", in[0].shape, "label_length", in[2].shape);
  b = same_batch(b, in[3].shape.dims[0], who, "y_pred", in[0].shape, "input_length", in[3].shape);
  return b;
}

TensorType infer_ctc_loss(const Ins& in, const Attrs&) {
  int64_t b = check_loss_inputs(in);
  return {in[0].dtype, Shape(Dims{b})};
}

TensorType infer_ctc_loss_grad(const Ins& in, const Attrs&) {
  int64_t b = check_loss_inputs(in);
  return {in[0].dtype, Shape(Dims{b, in[0].shape.dims[1], in[0].shape.dims[2]})};
}

Grads grad_ctc_loss(const NodePtr& n, const NodePtr& dy) {
  NodePtr g = make_node(ops::CtcLossGrad, n->inputs);
  // dy (B,) scales each batch entry's gradient.
  return {mul(expand_dims(expand_dims(dy, 1), 2), g), nullptr, nullptr, nullptr};
}

TensorType infer_ctc_decode(const Ins& in, const Attrs& a) {
  const char* who = "ctc_decode";
  check(in.size() == 2, Status::internal, who, ": expected 2 inputs");
  check_logits(in[0], who);
  check_lengths(in[1], who, "input_length");
  int64_t b = same_batch(in[0].shape.dims[0], in[1].shape.dims[0], who, "y_pred", in[0].shape,
                         "input_length", in[1].shape);
  int64_t greedy = a.i(attr::greedy), beam_width = a.i(attr::beam_width),
          top_paths = a.i(attr::top_paths);
  check(greedy || beam_width >= 1, Status::invalid_argument, who,
        ": beam_width must be at least 1, got ", beam_width);
  check(greedy || top_paths >= 1, Status::invalid_argument, who,
        ": top_paths must be at least 1, got ", top_paths);
  check(greedy || top_paths <= beam_width, Status::invalid_argument, who, ": top_paths (",
        top_paths, ") must not exceed beam_width (", beam_width, ")");
  int64_t paths = greedy ? 1 : top_paths;
  TensorType t{DType::b8, Shape(Dims{}), {}};
  for (int64_t p = 0; p < paths; ++p)
    t.parts.push_back({DType::i64, Shape(Dims{b, in[0].shape.dims[1]}), {}});
  t.parts.push_back({in[0].dtype, Shape(Dims{b, paths}), {}});
  return t;
}

// As TensorFlow (prevent_gradient on its CTC gradient): differentiating the gradient is an error,
// not a silent zero.
Grads grad_ctc_loss_grad(const NodePtr&, const NodePtr&) {
  fail(Status::not_implemented,
       "ctc_batch_cost: there is no second derivative of the CTC loss (its gradient is computed by "
       "a fused kernel, as in TensorFlow)");
}

OpRegistrar r1({ops::CtcLoss, infer_ctc_loss, grad_ctc_loss});
OpRegistrar r2({ops::CtcLossGrad, infer_ctc_loss_grad, grad_ctc_loss_grad});
// A tuple (view: its kernel provides the parts' storage), as Loop.
OpRegistrar r3({ops::CtcDecode, infer_ctc_decode, nullptr, false, true});

}  // namespace
}  // namespace kb

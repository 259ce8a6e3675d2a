// CTC (docs/keras_semantics.md section 12) as graph builders over the CtcLoss and CtcDecode
// primitives (core/ops/ctc_ops.cpp), with the conventions of Keras' TensorFlow backend.
#pragma once
#include <vector>

#include "core/graph/node.h"

namespace kb::api {

// y_true (B, L) labels of any numeric dtype (cast to int32), y_pred (B, T, C) softmax
// probabilities, input_length and label_length (B, 1) -> (B, 1) negative log-likelihoods of
// log(y_pred + epsilon) under TensorFlow's ctc_loss (blank = C - 1).
NodePtr ctc_batch_cost(const NodePtr& y_true, const NodePtr& y_pred, const NodePtr& input_length,
                       const NodePtr& label_length);

struct CtcDecoded {
  // top_paths (1 when greedy) int64 (B, width of the longest sequence of that path), padded
  // with -1
  std::vector<NodePtr> decoded;
  NodePtr log_prob;  // (B, top_paths)
};
// y_pred (B, T, C) softmax probabilities, input_length (B,). beam_width and top_paths are only
// read (and checked) when greedy is false.
CtcDecoded ctc_decode(const NodePtr& y_pred, const NodePtr& input_length, bool greedy,
                      int64_t beam_width, int64_t top_paths);

}  // namespace kb::api

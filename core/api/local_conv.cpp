// local_conv1d and local_conv2d (unshared weights, docs/keras_semantics.md section 13) as
// compositions: one strided slice per kernel offset gathers the patches of every output
// position at once, and a batched MatMul applies each position's own weights. Gradients come from
// the primitives (StridedSlice, Concat, Reshape, Transpose, MatMul).
#include "core/api/api.h"
#include "core/api/local_conv.h"
#include "core/ops/build.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

void check_tuple(const Ints& v, size_t n, const char* who, const char* what) {
  check(v.size() == n, Status::invalid_argument, who, ": ", what, " must have ", n,
        " entries, got ", v.size());
  for (int64_t e : v)
    check(e >= 1, Status::invalid_argument, who, ": ", what, " must be positive, got ",
          dims_str(v));
}

void check_operands(const NodePtr& x, const NodePtr& k, int64_t rank, const char* who,
                    const char* layout) {
  require(x, who, "inputs");
  require(k, who, "kernel");
  check(x->shape().rank_known && x->rank() == rank, Status::shape, who, ": inputs must have rank ",
        rank, " ", layout, ", got ", x->shape().str());
  check(is_floating(x->dtype()), Status::dtype, who, ": inputs must be floating, got ",
        dtype_name(x->dtype()));
  check(k->shape().rank_known && k->rank() == 3, Status::shape, who,
        ": kernel must have rank 3 (output positions, patch features, filters), got ",
        k->shape().str());
  check(k->dtype() == x->dtype(), Status::dtype, who, ": kernel is ", dtype_name(k->dtype()),
        " but inputs are ", dtype_name(x->dtype()));
  for (int64_t d : k->shape().dims)
    check(d >= 0, Status::shape, who, ": the kernel's shape must be known, got ", k->shape().str());
}

// x[:, ..., begin : begin + (count - 1) * step + 1 : step, ...] on the given axes.
NodePtr window_slice(const NodePtr& x, const std::vector<int64_t>& axes,
                     const std::vector<int64_t>& begin, const std::vector<int64_t>& count,
                     const std::vector<int64_t>& step) {
  int64_t r = x->rank();
  std::vector<int64_t> b(r, 0), e(r, 0), s(r, 1);
  int64_t mask = (int64_t(1) << r) - 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i];
    b[ax] = begin[i];
    // No overflow: check_fits bounded (count - 1) * step + the window, and begin < the window.
    e[ax] = begin[i] + (count[i] - 1) * step[i] + 1;
    s[ax] = step[i];
    mask &= ~(int64_t(1) << ax);
  }
  return make_node(ops::StridedSlice, {x},
                   {{attr::begin, b},
                    {attr::end, e},
                    {attr::strides, s},
                    {attr::begin_mask, mask},
                    {attr::end_mask, mask},
                    {attr::shrink_mask, int64_t(0)}});
}

// The windows along each sliced axis must fit the input (where its size is known).
void check_fits(const NodePtr& x, const std::vector<int64_t>& axes,
                const std::vector<int64_t>& ksize, const std::vector<int64_t>& count,
                const std::vector<int64_t>& step, const char* who) {
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t n = x->shape().dims[axes[i]];
    int64_t need = checked_add(
        checked_mul(count[i] - 1, step[i], who, ": ", count[i], " output positions at stride ",
                    step[i], " span more than INT64_MAX input positions"),
        ksize[i], who, ": ", count[i], " output positions of a window ", ksize[i], " at stride ",
        step[i], " span more than INT64_MAX input positions");
    check(n < 0 || need <= n, Status::shape, who, ": ", count[i], " output positions of a window ",
          ksize[i], " at stride ", step[i], " need ", need, " input positions on axis ", axes[i],
          ", inputs ", x->shape().str(), " have ", n);
  }
}

// Stacks equally shaped tensors along a new axis.
NodePtr stack_at(const std::vector<NodePtr>& parts, int64_t axis) {
  std::vector<NodePtr> e;
  for (auto& p : parts) e.push_back(kb::expand_dims(p, axis));
  if (e.size() == 1) return e[0];
  return make_node(ops::Concat, e, {{attr::axis, axis}});
}

int64_t batch_dim(const NodePtr& x) {
  int64_t b = x->shape().dims[0];
  return b >= 0 ? b : -1;
}

}  // namespace

NodePtr local_conv1d(const NodePtr& inputs, const NodePtr& kernel, const Ints& kernel_size,
                     const Ints& strides, Format) {
  const char* who = "local_conv1d";
  check_operands(inputs, kernel, 3, who, "(batch, steps, channels)");
  check_tuple(kernel_size, 1, who, "kernel_size");
  check_tuple(strides, 1, who, "strides");
  // data_format is validated (by the caller) and otherwise ignored: inputs are channels-last.
  const Dims& kd = kernel->shape().dims;
  int64_t L = kd[0], feat = kd[1], k = kernel_size[0], s = strides[0];
  int64_t C = inputs->shape().dims[2];
  check(C >= 0, Status::shape, who, ": the number of channels must be known, got ",
        inputs->shape().str());
  int64_t patch =
      checked_mul(k, C, who, ": kernel_size ", k, " x ", C, " channels overflows int64");
  check(feat == patch, Status::shape, who, ": kernel ", kernel->shape().str(), " has ", feat,
        " patch features but kernel_size ", k, " x ", C, " channels gives ", patch);
  check(L >= 1, Status::shape, who, ": the kernel has no output positions");
  check_fits(inputs, {1}, {k}, {L}, {s}, who);
  std::vector<NodePtr> parts;
  for (int64_t t = 0; t < k; ++t) parts.push_back(window_slice(inputs, {1}, {t}, {L}, {s}));
  // (B, L, k, C) -> (B, L, k*C), feature index t*C + c -> (L, B, k*C)
  NodePtr patches = kb::reshape(stack_at(parts, 2), {batch_dim(inputs), L, patch});
  NodePtr y = matmul(kb::transpose(patches, {1, 0, 2}), kernel, false, false);  // (L, B, F)
  return kb::transpose(y, {1, 0, 2});
}

NodePtr local_conv2d(const NodePtr& inputs, const NodePtr& kernel, const Ints& kernel_size,
                     const Ints& strides, const Ints& output_shape, Format data_format) {
  const char* who = "local_conv2d";
  check_operands(inputs, kernel, 4, who, "(batch, 2 spatial dimensions, channels)");
  check_tuple(kernel_size, 2, who, "kernel_size");
  check_tuple(strides, 2, who, "strides");
  check_tuple(output_shape, 2, who, "output_shape");
  bool first = (data_format ? *data_format : Session::get().image_data_format()) ==
               DataFormat::channels_first;
  const Dims& kd = kernel->shape().dims;
  int64_t R = output_shape[0], Cc = output_shape[1], kh = kernel_size[0], kw = kernel_size[1];
  int64_t C = inputs->shape().dims[first ? 1 : 3], F = kd[2];
  check(C >= 0, Status::shape, who, ": the number of channels must be known, got ",
        inputs->shape().str());
  int64_t positions = checked_mul(R, Cc, who, ": output_shape ", dims_str(output_shape),
                                  " has more than INT64_MAX positions");
  int64_t patch = checked_mul(checked_mul(kh, kw, who, ": kernel_size ", dims_str(kernel_size),
                                          " has more than INT64_MAX cells"),
                              C, who, ": kernel_size ", dims_str(kernel_size), " x ", C,
                              " channels overflows int64");
  check(kd[0] == positions, Status::shape, who, ": kernel ", kernel->shape().str(), " has ", kd[0],
        " output positions but output_shape ", dims_str(output_shape), " gives ", positions);
  check(kd[1] == patch, Status::shape, who, ": kernel ", kernel->shape().str(), " has ", kd[1],
        " patch features but kernel_size ", dims_str(kernel_size), " x ", C, " channels gives ",
        patch);
  std::vector<int64_t> axes = first ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 2};
  check_fits(inputs, axes, kernel_size, output_shape, strides, who);
  std::vector<NodePtr> parts;
  for (int64_t p = 0; p < kh; ++p)
    for (int64_t q = 0; q < kw; ++q)
      parts.push_back(window_slice(inputs, axes, {p, q}, {R, Cc}, strides));
  int64_t B = batch_dim(inputs);
  NodePtr patches;  // (R*Cc, B, features)
  if (first) {
    // (B, C, kh*kw, R, Cc) -> (B, C*kh*kw, R*Cc): feature index c*kh*kw + p*kw + q
    NodePtr st = kb::reshape(stack_at(parts, 2), {B, patch, positions});
    patches = kb::transpose(st, {2, 0, 1});
  } else {
    // (B, R, Cc, kh*kw, C) -> (B, R*Cc, kh*kw*C): feature index (p*kw + q)*C + c
    NodePtr st = kb::reshape(stack_at(parts, 3), {B, positions, patch});
    patches = kb::transpose(st, {1, 0, 2});
  }
  NodePtr y = matmul(patches, kernel, false, false);  // (R*Cc, B, F)
  y = kb::reshape(y, {R, Cc, B, F});
  return first ? kb::transpose(y, {2, 3, 0, 1}) : kb::transpose(y, {2, 0, 1, 3});
}

}  // namespace kb::api

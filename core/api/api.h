// The Keras backend functions as graph builders (compositions of primitives). One function per
// Keras name; the C ABI (capi/) is a thin layer over these.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/graph/session.h"
#include "core/ops/op_names.h"

namespace kb::api {

using Axes = std::optional<std::vector<int64_t>>;  // nullopt = all axes (Keras None)
using Tensors = std::vector<NodePtr>;

// ---- create ---------------------------------------------------------------------------------
NodePtr variable(const std::shared_ptr<Buffer>& value, DType dtype, const std::string& name);
NodePtr constant(const std::shared_ptr<Buffer>& value, DType dtype,
                 const std::optional<Dims>& shape, const std::string& name);
NodePtr placeholder(const Shape& shape, DType dtype, const std::string& name);
NodePtr zeros(const Dims& shape, DType dtype, const std::string& name);
NodePtr ones(const Dims& shape, DType dtype, const std::string& name);
NodePtr eye(int64_t size, DType dtype, const std::string& name);
NodePtr zeros_like(const NodePtr& x, std::optional<DType> dtype, const std::string& name);
NodePtr ones_like(const NodePtr& x, std::optional<DType> dtype, const std::string& name);
NodePtr identity(const NodePtr& x, const std::string& name);
NodePtr random_uniform_variable(const Dims& shape, double low, double high, DType dtype,
                                const std::string& name, std::optional<int64_t> seed);
NodePtr random_normal_variable(const Dims& shape, double mean, double scale, DType dtype,
                               const std::string& name, std::optional<int64_t> seed);
NodePtr arange(double start, std::optional<double> stop, double step, DType dtype);
// arange with scalar tensors (stop null: [0, start)), values known when the function runs.
NodePtr arange_to(const NodePtr& start, const NodePtr& stop, const NodePtr& step, DType dtype);
int64_t count_params(const NodePtr& x);

// ---- elementwise ----------------------------------------------------------------------------
NodePtr unary_op(const char* keras_name, OpName primitive, const NodePtr& x);
NodePtr square(const NodePtr& x);
NodePtr abs(const NodePtr& x);
NodePtr sqrt(const NodePtr& x);
NodePtr exp(const NodePtr& x);
NodePtr log(const NodePtr& x);
NodePtr round(const NodePtr& x);
NodePtr sign(const NodePtr& x);
NodePtr sin(const NodePtr& x);
NodePtr cos(const NodePtr& x);
NodePtr erf(const NodePtr& x);  // the Gauss error function (keras.ops.erf)
NodePtr negative(const NodePtr& x);
NodePtr pow(const NodePtr& x, double a);
NodePtr clip(const NodePtr& x, double min_value, double max_value);
NodePtr binary_op(const char* keras_name, OpName primitive, const NodePtr& x, const NodePtr& y);
NodePtr cast(const NodePtr& x, DType dtype);

// ---- reduce ---------------------------------------------------------------------------------
NodePtr max(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr min(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr sum(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr prod(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr mean(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr var(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr std(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr any(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr all(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr logsumexp(const NodePtr& x, const Axes& axes, bool keepdims);
NodePtr cumsum(const NodePtr& x, int64_t axis);
NodePtr cumprod(const NodePtr& x, int64_t axis);
NodePtr argmax(const NodePtr& x, int64_t axis);
NodePtr argmin(const NodePtr& x, int64_t axis);

// ---- shape ----------------------------------------------------------------------------------
NodePtr concatenate(const Tensors& xs, int64_t axis);
NodePtr reshape(const NodePtr& x, const Dims& shape);
// x reshaped to the dims an integer vector holds when the function runs (one may be -1).
NodePtr reshape_to(const NodePtr& x, const NodePtr& shape);
NodePtr permute_dimensions(const NodePtr& x, const std::vector<int64_t>& pattern);
NodePtr repeat_elements(const NodePtr& x, int64_t rep, int64_t axis);
NodePtr repeat(const NodePtr& x, int64_t n);
NodePtr tile(const NodePtr& x, const std::vector<int64_t>& n);
// tile and slice with integer vectors whose values are known when the function runs.
NodePtr tile_to(const NodePtr& x, const NodePtr& n);
NodePtr slice_to(const NodePtr& x, const NodePtr& start, const NodePtr& size);
NodePtr flatten(const NodePtr& x);
NodePtr batch_flatten(const NodePtr& x);
NodePtr expand_dims(const NodePtr& x, int64_t axis);
NodePtr squeeze(const NodePtr& x, int64_t axis);
NodePtr stack(const Tensors& xs, int64_t axis);
NodePtr one_hot(const NodePtr& indices, int64_t num_classes);
// one_hot with num_classes an integer scalar tensor (known when the function runs).
NodePtr one_hot_to(const NodePtr& indices, const NodePtr& num_classes);
NodePtr reverse(const NodePtr& x, const std::vector<int64_t>& axes);
NodePtr slice(const NodePtr& x, const std::vector<int64_t>& start,
              const std::vector<int64_t>& size);
NodePtr gather(const NodePtr& reference, const NodePtr& indices);
NodePtr strided_slice(const NodePtr& x, const std::vector<int64_t>& begin,
                      const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                      int64_t begin_mask, int64_t end_mask, int64_t shrink_mask,
                      int64_t new_axis_mask);
NodePtr shape(const NodePtr& x);

// ---- linalg ---------------------------------------------------------------------------------
NodePtr dot(const NodePtr& x, const NodePtr& y);
NodePtr batch_dot(const NodePtr& x, const NodePtr& y,
                  std::optional<std::pair<int64_t, int64_t>> axes);
NodePtr transpose(const NodePtr& x);
// keras.ops.einsum of one or two operands (NumPy's subscripts: letters, one '...' each,
// an implicit output without '->'); a subscript repeated within an operand is refused.
NodePtr einsum(const std::string& equation, const Tensors& operands);

// ---- nn -------------------------------------------------------------------------------------
NodePtr relu(const NodePtr& x, double alpha, std::optional<double> max_value, double threshold);
NodePtr elu(const NodePtr& x, double alpha);
NodePtr sigmoid(const NodePtr& x);
NodePtr hard_sigmoid(const NodePtr& x);
NodePtr tanh(const NodePtr& x);
NodePtr softmax(const NodePtr& x, int64_t axis);
NodePtr softplus(const NodePtr& x);
NodePtr softsign(const NodePtr& x);
NodePtr categorical_crossentropy(const NodePtr& target, const NodePtr& output, bool from_logits,
                                 int64_t axis);
NodePtr sparse_categorical_crossentropy(const NodePtr& target, const NodePtr& output,
                                        bool from_logits, int64_t axis);
NodePtr binary_crossentropy(const NodePtr& target, const NodePtr& output, bool from_logits);
NodePtr l2_normalize(const NodePtr& x, const Axes& axes);
NodePtr bias_add(const NodePtr& x, const NodePtr& bias, DataFormat data_format);
NodePtr in_top_k(const NodePtr& predictions, const NodePtr& targets, int64_t k);

// ---- graph ----------------------------------------------------------------------------------
NodePtr update(const NodePtr& x, const NodePtr& new_x);
NodePtr update_add(const NodePtr& x, const NodePtr& increment);
NodePtr update_sub(const NodePtr& x, const NodePtr& decrement);
NodePtr moving_average_update(const NodePtr& x, const NodePtr& value, double momentum);
NodePtr stop_gradient(const NodePtr& x);
NodePtr print_tensor(const NodePtr& x, const std::string& message);
void set_value(const NodePtr& x, const std::shared_ptr<Buffer>& value);
// The value of x when constants and static shapes alone determine it, as a constant.
NodePtr static_value(const NodePtr& x);
// The value of a scalar, or of an integer tensor's entries, where static_value knows it now.
std::optional<double> static_scalar(const NodePtr& x);
std::optional<std::vector<int64_t>> static_ints(const NodePtr& x);

// Shared checks.
void require(const NodePtr& x, const char* who, const char* what);
DType resolve_dtype(std::optional<DType> t);  // nullopt -> floatx

}  // namespace kb::api

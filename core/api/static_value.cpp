// static_value: the value of a tensor that constants and static shapes alone determine. Keras
// computes shapes with tensor arithmetic on K.shape(x) (Conv2DTranspose: K.shape(x)[1] * 2);
// where those dims are known when the graph is built, the result is a number now.
#include <optional>
#include <unordered_map>

#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/graph/scalar.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

NodePtr rebuild(const NodePtr& n, std::unordered_map<const Node*, NodePtr>& done);

// Gather / StridedSlice of a shape with unknown dims (K.shape(x)[1] with the batch unknown):
// the same op applied to the positions 0..rank-1 says which dims it takes; the result folds when
// those are known.
NodePtr select_dims(const NodePtr& n, std::unordered_map<const Node*, NodePtr>& done) {
  const NodePtr& shape_of = n->inputs[0];
  const Node& src = *shape_of->inputs[0];
  check(src.shape().rank_known, Status::invalid_argument, "static_value: the rank of '", src.name,
        "' is known only when a function runs");
  const Dims& d = src.shape().dims;
  auto pos = Buffer::make(DType::i64, {int64_t(d.size())});
  for (size_t i = 0; i < d.size(); ++i) pos->as<int64_t>()[i] = int64_t(i);
  std::vector<NodePtr> ins{constant_node(pos)};
  for (size_t i = 1; i < n->inputs.size(); ++i) ins.push_back(rebuild(n->inputs[i], done));
  auto taken = evaluate(make_node(*n->op, std::move(ins), n->attrs));
  auto b = Buffer::make(n->dtype(), taken->dims);
  for (int64_t i = 0; i < taken->numel(); ++i) {
    int64_t p = taken->as<int64_t>()[i];
    check(d[size_t(p)] >= 0, Status::invalid_argument, "static_value: dim ", p, " of '", src.name,
          "' ", src.shape().str(), " is known only when a function runs");
    write_scalar(n->dtype(), static_cast<char*>(b->data()) + i * dtype_size(n->dtype()),
                 double(d[size_t(p)]));
  }
  return constant_node(b, n->name);
}

NodePtr rebuild(const NodePtr& n, std::unordered_map<const Node*, NodePtr>& done) {
  auto it = done.find(n.get());
  if (it != done.end()) return it->second;
  NodePtr r;
  if ((n->is(ops::Gather) || n->is(ops::StridedSlice)) && n->inputs[0]->is(ops::ShapeOf) &&
      !n->inputs[0]->inputs[0]->shape().fully_known()) {
    r = select_dims(n, done);
  } else if (n->is(ops::Constant)) {
    r = n;
  } else if (n->is(ops::ShapeOf)) {
    const Node& src = *n->inputs[0];
    check(src.shape().fully_known(), Status::invalid_argument, "static_value: the shape ",
          src.shape().str(), " of '", src.name, "' is known only when a function runs");
    const Dims& d = src.shape().dims;
    auto b = Buffer::make(n->dtype(), {int64_t(d.size())});
    for (size_t i = 0; i < d.size(); ++i)
      write_scalar(n->dtype(), static_cast<char*>(b->data()) + i * dtype_size(n->dtype()),
                   double(d[i]));
    r = constant_node(b, n->name);
  } else {
    check(!n->op->leaf && !n->op->stateful && !n->op->dynamic && n->type.parts.empty(),
          Status::invalid_argument, "static_value: '", n->name, "' depends on a ", n->op->name,
          ", known only when a function runs");
    std::vector<NodePtr> ins;
    for (auto& c : n->inputs) ins.push_back(rebuild(c, done));
    r = make_node(*n->op, std::move(ins), n->attrs, n->name);
  }
  done[n.get()] = r;
  return r;
}

}  // namespace

NodePtr static_value(const NodePtr& x) {
  require(x, "static_value", "x");
  std::unordered_map<const Node*, NodePtr> done;
  return constant_node(evaluate(rebuild(x, done)), x->name);
}

std::optional<NodePtr> static_value_if_known(const NodePtr& x) {
  try {
    return static_value(x);
  } catch (const Error& e) {
    if (e.code() != Status::invalid_argument) throw;
    return std::nullopt;  // known only when a function runs
  }
}

std::optional<double> static_scalar(const NodePtr& x) {
  auto v = static_value_if_known(x);
  if (!v) return std::nullopt;
  return read_scalar((*v)->value->dtype, (*v)->value->data());
}

std::optional<std::vector<int64_t>> static_ints(const NodePtr& x) {
  auto v = static_value_if_known(kb::cast(x, DType::i64));
  if (!v) return std::nullopt;
  const int64_t* d = (*v)->value->as<int64_t>();
  return std::vector<int64_t>(d, d + (*v)->value->numel());
}

}  // namespace kb::api

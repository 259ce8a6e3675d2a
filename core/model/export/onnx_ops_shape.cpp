// Padding, slicing, tiling, filling, reversing, resizing and the index reductions in ONNX's
// form.
#include <climits>

#include "core/model/export/onnx_ops.h"
#include "core/ops/modes.h"
#include "core/ops/op_names.h"
#include "core/util/error.h"

namespace kb::model::onnx_export {

namespace {

std::string pad(const Lowering& l) {  // zeros around, per axis
  std::vector<int64_t> pads = l.node.attrs.ints(attr::pad_before);
  const auto& after = l.node.attrs.ints(attr::pad_after);
  pads.insert(pads.end(), after.begin(), after.end());
  return l.g.node("Pad", {l.in[0], l.g.int64s(pads, "pads")}, {Attr::of_string("mode", "constant")},
                  l.hint);
}

std::string tile(const Lowering& l) {
  return l.g.node("Tile", {l.in[0], l.g.int64s(l.node.attrs.ints(attr::multiples), "repeats")}, {},
                  l.hint);
}

std::string fill_like(const Lowering& l) {  // the value broadcast to x's shape
  std::string value = l.g.scalar(l.node.attrs.f(attr::value), l.node.dtype(), "fill");
  return l.g.node("Expand", {value, l.g.node("Shape", {l.in[0]})}, {}, l.hint);
}

std::string size_of(const Lowering& l) {  // the product of some dims (none listed: all)
  const auto& axes = l.node.attrs.ints(attr::axes);
  std::string dims = l.g.node("Shape", {l.in[0]});
  if (!axes.empty()) {
    std::vector<int64_t> ax = axes;
    for (int64_t& a : ax)
      if (a < 0) a += l.node.inputs[0]->rank();
    dims = l.g.node("Gather", {dims, l.g.int64s(ax, "axes")}, {Attr::of_int("axis", 0)});
  }
  std::string n = l.g.node("ReduceProd", {dims}, {Attr::of_int("keepdims", 0)});
  return l.g.node("Cast", {n}, {Attr::of_int("to", elem_type(l.node.dtype()))}, l.hint);
}

std::string arg_reduce(const Lowering& l) {
  int64_t axis = l.node.attrs.i(attr::axis);
  if (axis < 0) axis += l.node.inputs[0]->rank();
  const char* op = mode_of<ArgMode>(l.node.attrs) == ArgMode::max ? "ArgMax" : "ArgMin";
  std::string i = l.g.node(op, {l.in[0]},
                           {Attr::of_int("axis", axis), Attr::of_int("keepdims", 0),
                            Attr::of_int("select_last_index", 0)});
  return l.g.node("Cast", {i}, {Attr::of_int("to", elem_type(l.node.dtype()))}, l.hint);
}

std::string cumulative(const Lowering& l) {
  check(mode_of<ScanMode>(l.node.attrs) == ScanMode::sum, Status::not_implemented,
        "export_onnx: a cumulative product has no ONNX operator");
  // CumSum takes its axis as a scalar.
  std::string axis = l.g.scalar(double(l.node.attrs.i(attr::axis)), DType::i64, "axis");
  return l.g.node("CumSum", {l.in[0], axis}, {}, l.hint);
}

std::string reverse(const Lowering& l) {  // each axis read backwards: a slice of step -1
  std::vector<int64_t> axes = l.node.attrs.ints(attr::axes);
  for (int64_t& a : axes)
    if (a < 0) a += l.node.rank();
  std::vector<int64_t> starts(axes.size(), -1), ends(axes.size(), INT64_MIN),
      steps(axes.size(), -1);
  return l.g.node("Slice",
                  {l.in[0], l.g.int64s(starts, "starts"), l.g.int64s(ends, "ends"),
                   l.g.int64s(axes, "axes"), l.g.int64s(steps, "steps")},
                  {}, l.hint);
}

// Python-style slices as ONNX's Slice, which clamps as Python does (so the sizes need not be
// known): masks by the ends they stand for; a shrunk axis taken by a Gather of its index.
std::string strided_slice(const Lowering& l) {
  const Attrs& a = l.node.attrs;
  const auto& begin = a.ints(attr::begin);
  const auto& end = a.ints(attr::end);
  const auto& strides = a.ints(attr::strides);
  const int64_t bm = a.i(attr::begin_mask), em = a.i(attr::end_mask), sm = a.i(attr::shrink_mask);
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < begin.size(); ++i) {
    if ((sm >> i) & 1) continue;
    const int64_t step = strides[i];
    const int64_t b = (bm >> i) & 1 ? (step > 0 ? 0 : INT64_MAX) : begin[i];
    const int64_t e = (em >> i) & 1 ? (step > 0 ? INT64_MAX : INT64_MIN) : end[i];
    if (b == 0 && e == INT64_MAX && step == 1) continue;  // the whole axis
    starts.push_back(b);
    ends.push_back(e);
    axes.push_back(int64_t(i));
    steps.push_back(step);
  }
  std::string y = l.in[0];
  if (!axes.empty())
    y = l.g.node("Slice", {y, l.g.int64s(starts, "starts"), l.g.int64s(ends, "ends"),
                           l.g.int64s(axes, "axes"), l.g.int64s(steps, "steps")});
  for (size_t i = begin.size(); i-- > 0;)  // the last first: a Gather drops its axis
    if ((sm >> i) & 1) {
      y = l.g.node("Gather", {y, l.g.scalar(double(begin[i]), DType::i64, "index")},
                   {Attr::of_int("axis", int64_t(i))});
    }
  return l.g.node("Identity", {y}, {}, l.hint);
}

// Keras 2's resize_images by integer factors: source = destination / factor (ONNX's asymmetric
// coordinates), nearest cells floored, linear taps clamped at the edge.
std::string resize(const Lowering& l) {
  const bool first = l.node.attrs.i(attr::layout) != 0;
  const auto& factors = l.node.attrs.ints(attr::factors);
  const int64_t r = l.node.rank();
  auto scales = Buffer::make(DType::f32, {r});
  for (int64_t i = 0; i < r; ++i) scales->as<float>()[i] = 1;
  for (size_t i = 0; i < factors.size(); ++i)
    scales->as<float>()[(first ? 2 : 1) + i] = float(factors[i]);
  const bool linear = mode_of<ResizeMode>(l.node.attrs) == ResizeMode::bilinear;
  std::vector<Attr> attrs{Attr::of_string("mode", linear ? "linear" : "nearest"),
                          Attr::of_string("coordinate_transformation_mode", "asymmetric")};
  if (!linear) attrs.push_back(Attr::of_string("nearest_mode", "floor"));
  return l.g.node("Resize", {l.in[0], "", l.g.initializer("scales", scales)}, std::move(attrs),
                  l.hint);
}

const RuleRegistrar rows({{ops::Resize.c_str(), resize},
                          {ops::Pad.c_str(), pad},
                          {ops::Tile.c_str(), tile},
                          {ops::FillLike.c_str(), fill_like},
                          {ops::SizeOf.c_str(), size_of},
                          {ops::ArgReduce.c_str(), arg_reduce},
                          {ops::Cumulative.c_str(), cumulative},
                          {ops::Reverse.c_str(), reverse},
                          {ops::StridedSlice.c_str(), strided_slice}});

}  // namespace

}  // namespace kb::model::onnx_export

// Convolutions and pooling in ONNX's form: channels first (a channels-last tensor transposed in
// and out, which ONNX Runtime folds), the kernel (spatial..., C, OC / G) rearranged to ONNX's
// (OC, C / G, spatial...), Keras' 'same' and causal pads explicit where the spatial dims are
// known and SAME_UPPER where they are not.
#include "core/model/export/onnx_ops.h"
#include "core/ops/conv_ops.h"
#include "core/ops/op_names.h"
#include "core/util/error.h"

namespace kb::model::onnx_export {

namespace {

std::vector<int64_t> joined(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

bool spatial_known(const Dims& x, bool channels_first, size_t nsp) {
  for (size_t i = 0; i < nsp; ++i)
    if (x[spatial_axis(channels_first, i)] < 0) return false;
  return true;
}

// The padding attributes: explicit pads, or SAME_UPPER for 'same' over unknown spatial dims.
void add_pads(std::vector<Attr>& attrs, bool same_unresolved, const std::vector<int64_t>& before,
              const std::vector<int64_t>& after) {
  if (same_unresolved)
    attrs.push_back(Attr::of_string("auto_pad", "SAME_UPPER"));
  else
    attrs.push_back(Attr::of_ints("pads", joined(before, after)));
}

// Input in channels first, the op, output back in the node's layout.
std::string channels_first_op(const Lowering& l, bool channels_first, const std::string& op,
                              std::vector<std::string> extra_inputs, std::vector<Attr> attrs) {
  const int64_t r = l.node.rank();
  std::string x = channels_first ? l.in[0] : transposed(l.g, l.in[0], to_channels_first(r));
  std::vector<std::string> ins{x};
  ins.insert(ins.end(), extra_inputs.begin(), extra_inputs.end());
  if (channels_first) return l.g.node(op, ins, std::move(attrs), l.hint);
  std::string y = l.g.node(op, ins, std::move(attrs));
  return l.g.node("Transpose", {y}, {Attr::of_ints("perm", to_channels_last(r))}, l.hint);
}

std::string conv(const Lowering& l) {
  const Dims& x = l.node.inputs[0]->shape().dims;
  const Dims& k = l.node.inputs[1]->shape().dims;
  ConvGeom geom = ConvGeom::from(l.node.attrs);
  const size_t nsp = geom.nsp();
  for (size_t i = 0; i < nsp + 2; ++i)
    check(k[i] >= 0, Status::not_implemented, "export_onnx: a convolution kernel of unknown dims");
  const int64_t c = k[nsp], m = k[nsp + 1], groups = geom.groups;
  bool same_unresolved = geom.same && !spatial_known(x, geom.channels_first, nsp);
  ConvGeom g = geom.resolved(x, k);
  // (spatial..., C, M) -> (spatial..., G, C / G, M) -> (G, M, C / G, spatial...) -> (G M, C / G,
  // spatial...): W[g M + m, ci, z] = K[z, g (C / G) + ci, m].
  std::vector<int64_t> split(k.begin(), k.begin() + int64_t(nsp));
  split.insert(split.end(), {groups, c / groups, m});
  std::vector<int64_t> perm{int64_t(nsp), int64_t(nsp) + 2, int64_t(nsp) + 1};
  for (size_t i = 0; i < nsp; ++i) perm.push_back(int64_t(i));
  std::vector<int64_t> onnx_dims{groups * m, c / groups};
  onnx_dims.insert(onnx_dims.end(), k.begin(), k.begin() + int64_t(nsp));
  std::string w = l.g.node("Reshape", {l.in[1], l.g.int64s(split)});
  w = transposed(l.g, w, perm);
  w = l.g.node("Reshape", {w, l.g.int64s(onnx_dims)});
  std::vector<Attr> attrs{
      Attr::of_ints("strides", g.strides), Attr::of_ints("dilations", g.dilation),
      Attr::of_int("group", groups),
      Attr::of_ints("kernel_shape", std::vector<int64_t>(k.begin(), k.begin() + int64_t(nsp)))};
  add_pads(attrs, same_unresolved, g.pad_before, g.pad_after);
  return channels_first_op(l, geom.channels_first, "Conv", {w}, std::move(attrs));
}

// The gradient of a convolution with respect to its input (Keras' transposed convolutions) as
// ConvTranspose: the forward kernel (spatial..., C, M) is ONNX's (M, C, spatial...), and
// output_padding makes the output the forward input's size.
std::string conv_backward_data(const Lowering& l) {
  check(l.node.inputs.size() == 2, Status::not_implemented,
        "export_onnx: a transposed convolution shaped like a third input");
  ConvGeom geom = ConvGeom::from(l.node.attrs);
  const size_t nsp = geom.nsp();
  check(geom.groups == 1, Status::not_implemented, "export_onnx: a grouped transposed convolution");
  Dims x = l.node.shape().dims;
  const Dims& dy = l.node.inputs[0]->shape().dims;
  const Dims& k = l.node.inputs[1]->shape().dims;
  for (size_t i = 0; i < nsp; ++i)
    check(x[spatial_axis(geom.channels_first, i)] >= 0 &&
              dy[spatial_axis(geom.channels_first, i)] >= 0 && k[i] >= 0,
          Status::not_implemented, "export_onnx: a transposed convolution of unknown spatial dims");
  ConvGeom g = geom.resolved(x, k);
  std::vector<int64_t> output_padding;
  for (size_t i = 0; i < nsp; ++i) {
    const size_t ax = spatial_axis(geom.channels_first, i);
    int64_t keff = dilated_size(k[i], g.dilation[i], g.who);
    int64_t made = g.strides[i] * (dy[ax] - 1) + keff - g.pad_before[i] - g.pad_after[i];
    output_padding.push_back(x[ax] - made);
  }
  std::vector<int64_t> perm{int64_t(nsp) + 1, int64_t(nsp)};
  for (size_t i = 0; i < nsp; ++i) perm.push_back(int64_t(i));
  std::string w = transposed(l.g, l.in[1], perm);
  std::vector<Attr> attrs{
      Attr::of_ints("strides", g.strides), Attr::of_ints("dilations", g.dilation),
      Attr::of_ints("kernel_shape", std::vector<int64_t>(k.begin(), k.begin() + int64_t(nsp))),
      Attr::of_ints("output_padding", output_padding),
      Attr::of_ints("pads", joined(g.pad_before, g.pad_after))};
  return channels_first_op(l, geom.channels_first, "ConvTranspose", {w}, std::move(attrs));
}

std::string pool(const Lowering& l) {
  const Dims& x = l.node.inputs[0]->shape().dims;
  PoolGeom geom = PoolGeom::from(l.node.attrs);
  bool same_unresolved = geom.same && !spatial_known(x, geom.channels_first, geom.nsp());
  PoolGeom g = geom.resolved(x);
  std::vector<Attr> attrs{Attr::of_ints("kernel_shape", g.window),
                          Attr::of_ints("strides", g.strides)};
  add_pads(attrs, same_unresolved, g.pad_before, g.pad_after);
  // Average pooling divides by the real cells (count_include_pad 0, ONNX's default); max pooling
  // never takes a padded cell.
  const char* op = g.mode == PoolMode::max ? "MaxPool" : "AveragePool";
  return channels_first_op(l, geom.channels_first, op, {}, std::move(attrs));
}

const RuleRegistrar rows({{ops::Conv.c_str(), conv},
                          {ops::ConvBackwardData.c_str(), conv_backward_data},
                          {ops::Pool.c_str(), pool}});

}  // namespace

}  // namespace kb::model::onnx_export

// The pad fold (core/compile/passes.h): zero padding of the spatial axes read only by a
// convolution (Keras' ZeroPadding2D before a 'valid' strided convolution, as MobileNets and
// ResNets have it) becomes the convolution's own padding, conv(pad(x)) = conv(x) with the pads
// added, so that the padded copy of x is never written: 2 ms of MobileNetV2's 5 at batch 1.
// oneDNN takes different pads before and after each axis; cuDNN does not, so CPU plans only.
#include "core/compile/passes.h"
#include "core/ops/conv_ops.h"
#include "core/ops/op.h"

namespace kb {

void fold_conv_pads(Plan& plan) {
  if (plan.device != Device::cpu) return;
  const std::vector<int> reader = sole_reader(plan);
  std::vector<bool> removed(plan.steps.size(), false);
  for (size_t p = 0; p < plan.steps.size(); ++p) {
    const Step& pad = plan.steps[p];
    if (!pad.node->is(ops::Pad) || pad.run_time || pad.in.size() != 1 ||
        reader[size_t(pad.out)] < 0)
      continue;
    Step& conv = plan.steps[size_t(reader[size_t(pad.out)])];
    const Node& cn = *conv.node;
    if (!(cn.is(ops::Conv) || cn.is(ops::FusedConv)) || conv.run_time || conv.in[0] != pad.out)
      continue;
    ConvGeom g = ConvGeom::from(cn.attrs);
    const std::vector<int64_t>& pb = pad.node->attrs.ints(attr::pad_before);
    const std::vector<int64_t>& pa = pad.node->attrs.ints(attr::pad_after);
    const size_t nsp = g.nsp(), ca = channel_axis(g.channels_first, nsp);
    // 'same' and causal pads follow from the input's dims, which the fold changes.
    if (g.same || g.causal || pb.size() != nsp + 2 || pa.size() != nsp + 2 ||
        g.pad_before.size() != nsp || g.pad_after.size() != nsp || pb[0] || pa[0] || pb[ca] ||
        pa[ca])
      continue;
    Attrs attrs = cn.attrs;
    for (size_t i = 0; i < nsp; ++i) {
      size_t axis = spatial_axis(g.channels_first, i);
      g.pad_before[i] += pb[axis];
      g.pad_after[i] += pa[axis];
    }
    attrs.set(attr::pad_before, g.pad_before);
    attrs.set(attr::pad_after, g.pad_after);
    std::vector<NodePtr> inputs = cn.inputs;
    inputs[0] = pad.node->inputs[0];
    NodePtr node =
        plan_node(cn.op->name, std::move(inputs), std::move(attrs), conv.out_type, cn.name);
    plan.nodes.push_back(node);
    conv.node = node.get();
    conv.in[0] = pad.in[0];
    conv.in_types[0] = pad.in_types[0];
    removed[p] = true;
  }
  std::vector<Step> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (!removed[i]) steps.push_back(std::move(plan.steps[i]));
  plan.steps = std::move(steps);
}

}  // namespace kb

// function(inputs, outputs, updates) -> Plan: the compiler's passes (core/compile/passes.h) in
// order, under the options the environment gives now.
#include "core/compile/plan.h"

#include "core/compile/options.h"
#include "core/compile/passes.h"
#include "core/graph/session.h"
#include "core/ops/op.h"

namespace kb {

NodePtr plan_node(const std::string& op_name, std::vector<NodePtr> inputs, Attrs attrs,
                  const TensorType& type, const std::string& name) {
  auto node = std::make_shared<Node>();
  node->op = &op(op_name);
  node->inputs = std::move(inputs);
  node->attrs = std::move(attrs);
  node->type = type;
  node->name = name;
  node->id = Session::get().next_node_id();
  return node;
}

std::shared_ptr<Plan> build_plan(const std::vector<NodePtr>& inputs,
                                 const std::vector<TensorType>& input_types,
                                 const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& updates, int phase, Device device,
                                 const std::vector<int>& fed_phases) {
  const CompileOptions options = CompileOptions::from_environment();
  std::vector<NodePtr> roots = outputs, assigns = updates;
  bool rewritten = options.fuse && rewrite_epilogues(roots, assigns, device);
  std::shared_ptr<Plan> plan =
      lower(inputs, input_types, roots, assigns, phase, device, fed_phases);
  if (rewritten) {  // the steps name the rewritten graph's nodes: the plan keeps them
    plan->nodes.insert(plan->nodes.end(), roots.begin(), roots.end());
    plan->nodes.insert(plan->nodes.end(), assigns.begin(), assigns.end());
  }
  if (options.fuse) {
    fold_conv_pads(*plan);
    fold_conv_scales(*plan);
  }
  choose_kernels(*plan, options);
  if (options.fuse) fuse_elementwise(*plan, input_types);
  drop_unread_steps(*plan);
  bucket_collectives(*plan, options.bucket_bytes);
  describe_collectives(*plan);
  mark_invariant_steps(*plan);
  log_plan(*plan, options.log_plan);
  place_constants(*plan);
  plan_memory(*plan, options.arena);
  return plan;
}

}  // namespace kb

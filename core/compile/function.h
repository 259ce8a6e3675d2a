// function(inputs, outputs, updates): a callable compiled into plans, one per input signature.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/compile/plan.h"

namespace kb {

class Function {
 public:
  Function(std::vector<NodePtr> inputs, std::vector<NodePtr> outputs, std::vector<NodePtr> updates);
  // Inputs are concrete values, one per placeholder, a sparse input giving three (indices,
  // values, dense_shape); converted to the placeholders' dtypes when they differ.
  std::vector<std::shared_ptr<Buffer>> call(std::vector<std::shared_ptr<Buffer>> inputs);
  // The buffers `call` takes for values given as tensors, one per input of the function: a
  // constant, or a sparse tensor of constants for a sparse input (a sparse value given for a
  // dense input is densified).
  std::vector<std::shared_ptr<Buffer>> bind(const std::vector<NodePtr>& values) const;
  // Runs the function with `values` (as for bind) and writes output k into outputs[k]: a
  // Constant of output k's dtype and shape whose value is replaced by the result, in place when
  // its storage is its own alone. Everything is checked before anything runs. With the same
  // tensors on every call, the steady state of a CPU plan allocates nothing here.
  void call_into(const std::vector<NodePtr>& values, const std::vector<NodePtr>& outputs);
  size_t num_inputs() const { return sparse_input_.size(); }
  Device device() const;
  void set_device(Device d);
  size_t cached_plans() const;

 private:
  // The plan for `inputs` (mu_ held): the last call's when they have its signature (no key
  // built), else from the cache, built when missing; converts inputs whose dtype differs from
  // their placeholder's, and remembers the plan as the last call's.
  std::shared_ptr<Plan> plan_for(std::vector<std::shared_ptr<Buffer>>& inputs);
  // The last call's plan when `inputs` have its signature (mu_ held), else null.
  std::shared_ptr<Plan> same_as_last_call(const std::vector<std::shared_ptr<Buffer>>& inputs) const;

  void bind_into(const std::vector<NodePtr>& values,
                 std::vector<std::shared_ptr<Buffer>>& bufs) const;
  void check_output_tensors(const std::vector<NodePtr>& outputs) const;

  std::vector<NodePtr> inputs_, outputs_, updates_;  // inputs_: placeholders, sparse ones expanded
  std::vector<bool> sparse_input_;                   // per input as given
  Device device_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Plan>> cache_;
  // The plan of the last call and what chose it: a call with the same input dtypes and dims
  // (no learning phase among the inputs) takes it without building the cache key.
  struct LastCall {
    std::shared_ptr<Plan> plan;
    std::vector<std::pair<DType, Dims>> inputs;
    int phase = 0;
    Device device = Device::cpu;
  } last_;
  // call_into's tables, kept from call to call (mu_ held).
  std::vector<std::shared_ptr<Buffer>> bound_, results_;
  std::vector<OutputPlace> places_;
};

// Evaluates a tensor that depends on no placeholder; the result is in host memory.
std::shared_ptr<Buffer> evaluate(const NodePtr& x);

// Converts a buffer to another dtype (NumPy-like casting).
std::shared_ptr<Buffer> convert_buffer(const std::shared_ptr<Buffer>& b, DType to);

}  // namespace kb

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
  // Inputs are concrete values (converted to the placeholders' dtypes when they differ).
  std::vector<std::shared_ptr<Buffer>> call(std::vector<std::shared_ptr<Buffer>> inputs);
  size_t num_inputs() const { return inputs_.size(); }
  Device device() const;
  void set_device(Device d);
  size_t cached_plans() const;

 private:
  std::vector<NodePtr> inputs_, outputs_, updates_;
  Device device_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Plan>> cache_;
};

// Evaluates a tensor that depends on no placeholder; the result is in host memory.
std::shared_ptr<Buffer> evaluate(const NodePtr& x);

// Converts a buffer to another dtype (NumPy-like casting).
std::shared_ptr<Buffer> convert_buffer(const std::shared_ptr<Buffer>& b, DType to);

}  // namespace kb

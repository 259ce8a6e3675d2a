#include "core/compile/function.h"

#include <cstring>
#include <unordered_set>

#include "core/backend/device.h"
#include "core/backend/threads.h"
#include "core/graph/scalar.h"
#include "core/graph/session.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"
#include "core/graph/traversal.h"

namespace kb {

namespace {

bool is_sparse_placeholder(const NodePtr& n) {
  if (!n->is(ops::SparseTensor)) return false;
  for (auto& c : n->inputs)
    if (!c->is(ops::Placeholder)) return false;
  return true;
}

}  // namespace

Function::Function(std::vector<NodePtr> inputs, std::vector<NodePtr> outputs,
                   std::vector<NodePtr> updates)
    : outputs_(std::move(outputs)), updates_(std::move(updates)), device_(default_device()) {
  std::unordered_set<const Node*> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodePtr& n = inputs[i];
    check(n != nullptr, Status::invalid_argument, "function: input ", i, " is NULL");
    bool sparse = is_sparse_placeholder(n);
    check(sparse || n->is(ops::Placeholder) || n->is(ops::LearningPhase), Status::invalid_argument,
          "function: input ", i, " ('", n->name, "') is not a placeholder");
    check(seen.insert(n.get()).second, Status::invalid_argument, "function: input '", n->name,
          "' is given twice");
    sparse_input_.push_back(sparse);
    if (!sparse) {
      inputs_.push_back(n);
      continue;
    }
    for (auto& part : n->inputs) {
      check(seen.insert(part.get()).second, Status::invalid_argument, "function: input '", n->name,
            "' is given twice");
      inputs_.push_back(part);
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i)
    check(outputs_[i] != nullptr, Status::invalid_argument, "function: output ", i, " is NULL");
  for (size_t i = 0; i < updates_.size(); ++i) {
    check(updates_[i] != nullptr, Status::invalid_argument, "function: update ", i, " is NULL");
    check(updates_[i]->is(ops::Assign), Status::invalid_argument, "function: update ", i,
          " is not an update operation (use update, update_add, update_sub, ...)");
  }
  // Fail early (at build time) on a placeholder that no call could provide.
  std::vector<NodePtr> roots = outputs_;
  roots.insert(roots.end(), updates_.begin(), updates_.end());
  for (auto& n : topo_order(roots))
    if (n->is(ops::Placeholder) && !seen.count(n.get()))
      fail(Status::invalid_argument, "function: placeholder '", n->name,
           "' is needed to compute the outputs but is not among the inputs");
}

Device Function::device() const {
  std::lock_guard<std::mutex> l(mu_);
  return device_;
}

void Function::set_device(Device d) {
  check(d == Device::cpu || device_api(d) != nullptr, Status::device, "function: no ",
        device_name(d), " device (", cuda_unavailable_reason(), ")");
  std::lock_guard<std::mutex> l(mu_);
  device_ = d;
}

size_t Function::cached_plans() const {
  std::lock_guard<std::mutex> l(mu_);
  return cache_.size();
}

std::vector<std::shared_ptr<Buffer>> Function::bind(const std::vector<NodePtr>& values) const {
  std::vector<std::shared_ptr<Buffer>> bufs;
  bind_into(values, bufs);
  return bufs;
}

void Function::bind_into(const std::vector<NodePtr>& values,
                         std::vector<std::shared_ptr<Buffer>>& bufs) const {
  check(values.size() == sparse_input_.size(), Status::invalid_argument, "function: expected ",
        sparse_input_.size(), " inputs, got ", values.size());
  bufs.clear();
  for (size_t i = 0; i < values.size(); ++i) {
    const NodePtr& v = values[i];
    check(v != nullptr, Status::invalid_argument, "function: input value ", i, " is NULL");
    bool sparse_value = v->is(ops::SparseTensor);
    if (sparse_input_[i]) {
      check(sparse_value, Status::invalid_argument, "function: input ", i,
            " is a sparse placeholder: give a sparse value (kb_sparse_from_coo)");
      for (auto& part : v->inputs) {
        check(part->value != nullptr, Status::invalid_argument, "function: input value ", i,
              " is a sparse tensor whose parts are not concrete values");
        bufs.push_back(part->value);
      }
    } else if (sparse_value) {
      bufs.push_back(evaluate(v));
    } else {
      check(v->value != nullptr, Status::invalid_argument, "function: input value ", i, " ('",
            v->name, "') is not a concrete value (use kb_tensor_from_data)");
      bufs.push_back(v->value);
    }
  }
}

void Function::check_output_tensors(const std::vector<NodePtr>& outputs) const {
  check(outputs.size() == outputs_.size(), Status::invalid_argument, "function: expected ",
        outputs_.size(), " output tensors, got ", outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const NodePtr& o = outputs[k];
    check(o != nullptr, Status::invalid_argument, "function: output tensor ", k, " is NULL");
    check(!o->is(ops::Variable), Status::invalid_argument, "function: output tensor ", k, " ('",
          o->name, "') is a variable (a variable changes through updates)");
    check(o->is(ops::Constant) && o->value, Status::invalid_argument, "function: output tensor ", k,
          " ('", o->name,
          "') is not a concrete value (use kb_tensor_from_data or a result of a call)");
    for (size_t j = 0; j < k; ++j)
      check(outputs[j] != o, Status::invalid_argument, "function: output tensor ", k,
            " is also output tensor ", j);
  }
}

void Function::call_into(const std::vector<NodePtr>& values, const std::vector<NodePtr>& outputs) {
  use_num_threads();
  check_output_tensors(outputs);
  std::lock_guard<std::mutex> l(mu_);
  std::shared_ptr<Plan> plan;
  // However the call ends, the tables drop what they hold (keeping their capacity), and then the
  // plan's Buffers that wrote into the tensors let go of them, so that the next call finds the
  // tensors' storage their own again.
  struct Clear {
    Function& f;
    const std::shared_ptr<Plan>& plan;
    ~Clear() {
      f.bound_.clear();
      f.results_.clear();
      for (auto& p : f.places_) p = {};
      if (plan) release_borrowed(*plan);
    }
  } clear{*this, plan};
  bind_into(values, bound_);
  check(bound_.size() == inputs_.size(), Status::invalid_argument, "function: expected ",
        inputs_.size(), " input buffers, got ", bound_.size());
  plan = plan_for(bound_);
  places_.resize(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const TensorType& t = plan->output_types[k];
    const Buffer& v = *outputs[k]->value;
    check(t.parts.empty() && t.shape.fully_known(), Status::shape, "function: output ", k,
          "'s shape is known only when it runs; use kb_function_call for it");
    // (Messages built only on failure: a call in the steady state formats nothing.)
    if (v.dtype != t.dtype)
      fail(Status::dtype, "function: output tensor ", k, " has dtype ", dtype_name(v.dtype),
           ", output ", k, " is ", dtype_name(t.dtype));
    if (v.dims != t.shape.dims)
      fail(Status::shape, "function: output tensor ", k, " has shape ", dims_str(v.dims),
           ", output ", k, " has ", dims_str(t.shape.dims));
    // Written in place only where nothing else sees the tensor's storage (another tensor, an
    // input of this call, a constant some plan holds).
    bool own = plan->device == Device::cpu && v.device == Device::cpu &&
               outputs[k]->value.use_count() == 1 && v.storage && v.storage.use_count() == 1 &&
               v.nbytes() > 0;
    places_[k] = own ? OutputPlace{v.storage, v.nbytes()} : OutputPlace{};
  }
  run_plan(*plan, bound_, places_, results_);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!results_[k]) continue;  // written in place
    std::shared_ptr<Buffer> r = to_host(results_[k]);
    if (places_[k].storage)
      std::memcpy(places_[k].storage.get(), r->data(), places_[k].bytes);
    else
      outputs[k]->value = std::move(r);
  }
}

std::vector<std::shared_ptr<Buffer>> Function::call(std::vector<std::shared_ptr<Buffer>> inputs) {
  use_num_threads();
  check(inputs.size() == inputs_.size(), Status::invalid_argument, "function: expected ",
        inputs_.size(), " inputs, got ", inputs.size());
  std::lock_guard<std::mutex> l(mu_);
  std::shared_ptr<Plan> plan = plan_for(inputs);
  auto results = run_plan(*plan, inputs);
  for (auto& r : results) r = to_host(r);
  return results;
}

std::shared_ptr<Plan> Function::plan_for(std::vector<std::shared_ptr<Buffer>>& inputs) {
  if (std::shared_ptr<Plan> last = same_as_last_call(inputs)) return last;
  std::string key;
  std::vector<TensorType> types;
  // A learning phase fed as a scalar input (as Keras feeds it) is part of the signature: the
  // plan for each value holds it as a constant and computes only the branches it selects.
  std::vector<int> fed_phases(inputs.size(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    check(inputs[i] != nullptr, Status::invalid_argument, "function: input value ", i, " is NULL");
    if (inputs[i]->dtype != inputs_[i]->dtype())
      inputs[i] = convert_buffer(inputs[i], inputs_[i]->dtype());
    types.push_back({inputs[i]->dtype, Shape(inputs[i]->dims)});
    key += std::to_string(int(inputs[i]->dtype)) + dims_str(inputs[i]->dims) + ";";
    if (inputs_[i]->is(ops::LearningPhase) && inputs[i]->dims.empty()) {
      auto host = to_host(inputs[i]);
      fed_phases[i] = read_scalar(host->dtype, host->data()) != 0 ? 1 : 0;
      key += "fed=" + std::to_string(fed_phases[i]) + ";";
    }
  }
  int phase = Session::get().fixed_learning_phase().value_or(0);
  key += "phase=" + std::to_string(phase);
  key += device_name(device_);
  std::shared_ptr<Plan> plan;
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    plan = it->second;
  } else {
    plan = build_plan(inputs_, types, outputs_, updates_, phase, device_, fed_phases);
    cache_[key] = plan;
  }
  bool phase_fed = false;
  for (int f : fed_phases) phase_fed = phase_fed || f >= 0;
  last_ = {};
  if (!phase_fed) {
    last_.plan = plan;
    for (auto& b : inputs) last_.inputs.push_back({b->dtype, b->dims});
    last_.phase = phase;
    last_.device = device_;
  }
  return plan;
}

std::shared_ptr<Plan> Function::same_as_last_call(
    const std::vector<std::shared_ptr<Buffer>>& inputs) const {
  if (!last_.plan || last_.device != device_ || last_.inputs.size() != inputs.size() ||
      last_.phase != Session::get().fixed_learning_phase().value_or(0))
    return nullptr;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i] || inputs[i]->dtype != last_.inputs[i].first ||
        inputs[i]->dims != last_.inputs[i].second)
      return nullptr;
  return last_.plan;
}

std::shared_ptr<Buffer> evaluate(const NodePtr& x) {
  check(x != nullptr, Status::invalid_argument, "eval: the tensor is NULL");
  if (x->is(ops::Constant) || x->is(ops::Variable)) return to_host(x->value);
  Function f({}, {x}, {});
  return f.call({})[0];
}

std::shared_ptr<Buffer> convert_buffer(const std::shared_ptr<Buffer>& b, DType to) {
  if (b->dtype == to) return b;
  NodePtr c = cast(constant_node(b), to);
  return evaluate(c);
}

}  // namespace kb

#include "core/model/callbacks/weights_snapshot.h"

#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/model/model.h"
#include "core/util/error.h"

namespace kb::model {

WeightsSnapshot::WeightsSnapshot(const Model& model) {
  for (const auto& w : model.weights()) {
    std::shared_ptr<Buffer> v = evaluate(w.variable);
    values_.push_back(Buffer::from_bytes(v->dtype, v->dims, v->data()));
  }
}

void WeightsSnapshot::restore(const Model& model) const {
  std::vector<Weight> weights = model.weights();
  check(weights.size() == values_.size(), Status::internal,
        "restoring weights: the model's weights changed in number");
  for (size_t i = 0; i < weights.size(); ++i) api::set_value(weights[i].variable, values_[i]);
}

}  // namespace kb::model

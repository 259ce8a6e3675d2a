// A copy of every weight of a model (Keras' model.get_weights()), to put back later
// (set_weights): EarlyStopping's best weights.
#pragma once
#include <memory>
#include <vector>

#include "core/graph/buffer.h"

namespace kb::model {

class Model;

class WeightsSnapshot {
 public:
  explicit WeightsSnapshot(const Model& model);
  // The model's weights take the copied values (each a fresh buffer, as set_value gives).
  void restore(const Model& model) const;

 private:
  std::vector<std::shared_ptr<Buffer>> values_;
};

}  // namespace kb::model

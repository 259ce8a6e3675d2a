// Keras' HDF5 files: the full model (model_config, training_config, model_weights,
// optimizer_weights) and weights-only files, as Keras 2.0-2.2 and tf.keras 2.x write them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace kb::model {

// A model from a Keras HDF5 file; compiled from its training_config (optimizer state restored)
// when `compile` and the file has one.
std::shared_ptr<Model> load_model(const std::string& path, bool compile);
void save_model(Model& model, const std::string& path, bool include_optimizer);
// Weights by topology (layers with weights, in order) or by layer name.
void load_weights(Model& model, const std::string& path, bool by_name);
void save_weights(Model& model, const std::string& path);
// compile from a training_config (Keras' loss, metrics and loss_weights forms).
void compile_from_config(Model& model, const Json& training_config);

class Hdf5Group;
// An optimizer's state from the datasets `names` of `g`: each non-null target (null: an entry
// the library keeps no variable for) takes the dataset of its index when every shape fits;
// else the optimizer stays fresh, with the warning Keras gives, naming `path`.
void restore_optimizer_values(const Hdf5Group& g, const std::vector<std::string>& names,
                              const std::vector<NodePtr>& targets, const std::string& path);

}  // namespace kb::model

// Keras 3's `.keras` archives (zip: metadata.json, config.json, model.weights.h5): the model,
// its weights as Keras 3 walks them, its compile_config and its optimizer's state.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/model/optimizers.h"

namespace kb::model {

// What a model loaded from an archive keeps of it, to write one Keras 3 reads back: the
// archive's metadata and serialized model (its compile_config too), the Training made from that
// compile_config (null: none), and where each weight lies in model.weights.h5.
struct Keras3Origin {
  Json metadata, serialized;
  bool keras3 = true;  // written by Keras 3 (else by tf.keras 2.13-2.15)
  // Keras 2.2.4's decay written as Keras 3's InverseTimeDecay: no learning-rate variable then.
  bool decay_as_schedule = false;
  const Training* training = nullptr;
  std::vector<std::pair<std::string, NodePtr>> weights;  // "layers/dense/vars/0" -> variable
};

// The variable each entry of a Keras 3 optimizer state of `entries` entries fills (an
// archive's optimizer/vars, Keras 3's HDF5 optimizer_weights): iterations, the learning rate
// (null: the library keeps no variable for it; not there with a schedule, nor from tf.keras,
// `keras3` false), use_ema's averages, each add_optimizer_variables call's slots interleaved
// variable by variable, then the state after them (Nadam's u_product). None when that many
// entries do not fit the optimizer, which then keeps fewer kinds than Keras 3's.
std::optional<std::vector<NodePtr>> keras3_state_targets(Optimizer& optimizer, size_t params,
                                                         size_t entries, bool keras3);

// What a Keras 3 archive of `model` (one from HDF5 or JSON) holds: its config in Keras 2's form
// under Keras 3's model object, its compile_config, each weight's path as Keras 3 walks them.
std::shared_ptr<Keras3Origin> keras3_origin_of(const Model& model);

// A model from a `.keras` archive; compiled from its compile_config (optimizer state restored)
// when `compile` and the archive has one.
std::shared_ptr<Model> load_keras_archive(const std::string& path, bool compile);

// A `.keras` archive Keras 3 loads (keras.saving.load_model) and continues training from: the
// model's config (as its archive gave it; for a model from elsewhere, HDF5 or JSON, Keras 2's
// form, which Keras 3 reads as it reads Keras 2's HDF5 files), its weights now and, with
// include_optimizer and the compile the archive gave (or the model's compile), the
// compile_config and the optimizer's state.
void save_keras_archive(Model& model, const std::string& path, bool include_optimizer);

// Keras 3's model.save_weights / load_weights of a `.weights.h5` file: model.weights.h5 alone
// (with the optimizer's state, as Keras 3 writes it, for a model compiled as its archive or
// itself says); loading restores that state into a compiled model.
void save_keras3_weights(Model& model, const std::string& path);
class Hdf5Group;
void load_keras3_weights(Model& model, const Hdf5Group& root, const std::string& path);

}  // namespace kb::model

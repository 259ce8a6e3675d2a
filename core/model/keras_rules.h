// Which Keras' training rules a model follows where the Keras versions differ: those of the
// Keras that wrote its file (docs/keras_semantics.md, "Keras 3's rules"). Keras 2.2.4's are the
// default; a Keras 3 file's model follows Keras 3's, a tf.keras file's tf.keras'.
#pragma once
#include <string>

namespace kb::model {

enum class KerasRules {
  keras2,    // Keras 2.2.4 (and the files of Keras 2.0-2.3)
  keras3,    // Keras 3: BatchNormalization's moving variance is the batch's biased variance,
             // RMSprop divides by sqrt(velocity + epsilon), clipnorm clips each gradient...
  tf_keras,  // tf.keras 2.4-2.15: Keras 3's, but BatchNormalization over 4-D and 5-D inputs
             // (TensorFlow's fused kernel) averages the batch's unbiased variance
};

// The rules a file's keras_version says: 3.x Keras 3's, 2.4 to 2.x tf.keras' (standalone Keras
// ended at 2.3, after which `keras` is tf.keras), older Keras 2.2.4's.
KerasRules keras_rules_of_version(const std::string& keras_version);

// The rules of the layers and models made on this thread while the scope lives (a loader
// sets them for what it builds); they stay with each layer and model after it.
class KerasRulesScope {
 public:
  explicit KerasRulesScope(KerasRules rules);
  ~KerasRulesScope();
  KerasRulesScope(const KerasRulesScope&) = delete;
  KerasRulesScope& operator=(const KerasRulesScope&) = delete;

 private:
  KerasRules saved_;
};

KerasRules current_keras_rules();

}  // namespace kb::model

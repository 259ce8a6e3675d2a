// Which Keras' training rules a model follows where the Keras versions differ: those of the
// Keras that wrote its file (docs/keras_semantics.md, "Keras 3's rules"). Keras 2.2.4's are the
// default; a Keras 3 archive's model follows Keras 3's.
#pragma once

namespace kb::model {

enum class KerasRules {
  keras2,  // Keras 2.2.4 (and the files of Keras 2.x and tf.keras)
  keras3,  // Keras 3: BatchNormalization's moving variance is the batch's biased variance,
           // RMSprop divides by sqrt(velocity + epsilon)
};

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

// Keras 3's LoRA of a kernel (Dense, EinsumDense, Embedding: lora_rank, lora_alpha): the kernel
// frozen, trained through two factors, `kernel + (alpha / rank) * a @ b`, a (the kernel's
// shape but its last dim, then the rank) drawn he_uniform and b (rank, last dim) zeros. Keras'
// archives keep the kernel merged and neither factor, both zeros once a file is read.
#pragma once
#include <string>
#include <vector>

#include "core/model/json.h"
#include "core/graph/node.h"

namespace kb::model {

struct Lora {
  int64_t rank = 0;  // 0: none
  double alpha = 0;
  NodePtr a, b;

  // The config's lora_rank and lora_alpha (alpha defaults to the rank); `constraint_key`, the
  // kernel's constraint, must be absent (Keras refuses both).
  static Lora of(const Json& config, const char* constraint_key, const std::string& where);
  bool enabled() const { return rank > 0; }
  // The factors' initializers.
  static Json a_initializer();
  static Json b_initializer();
  // The kernel the layer computes with (and Keras 3 saves).
  NodePtr merged(const NodePtr& kernel) const;
  // Where Keras 3 keeps the weights of a layer listed as kernel, bias (`bias`), a, b: the merged
  // kernel and the bias at vars/0 and vars/1, neither factor; none without LoRA.
  std::vector<std::string> keras3_paths(bool bias) const;
};

}  // namespace kb::model

// The options objects of the model API (compile's and fit's options_json, the configs of fit's
// callbacks): the keys each set knows, the type and the default of each, from api/kbackend.toml
// (core/model/option_sets.h is generated from it), and the check that refuses anything else before
// a value is read.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core/model/json.h"

namespace kb::model {

enum class OptionType {
  boolean,
  integer,
  number,
  string,
  object,
  numbers,
  class_weights,
  integer_or_string,  // ModelCheckpoint's save_freq: "epoch" or a number of batches
  callbacks,          // a list of {"class_name", "config"} objects (fit's Keras callbacks)
};

struct OptionKey {
  const char* name;
  OptionType type;
  const char* fallback = nullptr;  // Keras' default as JSON text; null: none (None)
};

struct OptionSet {
  const char* name;  // the set's name in api/kbackend.toml ("fit")
  std::vector<OptionKey> keys;
};

// Fails with Status::invalid_argument, `who` first, for an options object that is not an object,
// a key the set lacks (naming the key, the nearest known one and every key the set knows) or a
// value of another type than its row says (null counts as absent).
void check_options(const Json& options, const OptionSet& set, const std::string& who);

// `options` (checked) with each key it leaves out or sets to null that has a default taking it:
// what a reader then finds is every value Keras would use.
Json with_defaults(const Json& options, const OptionSet& set);

}  // namespace kb::model

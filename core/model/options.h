// The options objects of the model API (compile's and fit's options_json): the keys each set
// knows and the type of each, from api/kbackend.toml (core/model/option_sets.h is generated from
// it), and the check that refuses anything else before a value is read.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core/model/json.h"

namespace kb::model {

enum class OptionType { boolean, integer, number, object, numbers, class_weights };

struct OptionKey {
  const char* name;
  OptionType type;
};

struct OptionSet {
  const char* name;  // the set's name in api/kbackend.toml ("fit")
  std::vector<OptionKey> keys;
};

// Fails with Status::invalid_argument, `who` first, for an options object that is not an object,
// a key the set lacks (naming the key, the nearest known one and every key the set knows) or a
// value of another type than its row says (null counts as absent).
void check_options(const Json& options, const OptionSet& set, const std::string& who);

}  // namespace kb::model

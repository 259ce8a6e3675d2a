#include "core/model/keras_rules.h"

#include <cstdio>

namespace kb::model {
namespace {
thread_local KerasRules current = KerasRules::keras2;
}  // namespace

KerasRulesScope::KerasRulesScope(KerasRules rules) : saved_(current) { current = rules; }
KerasRulesScope::~KerasRulesScope() { current = saved_; }

KerasRules current_keras_rules() { return current; }

KerasRules keras_rules_of_version(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return KerasRules::keras2;
  if (major >= 3) return KerasRules::keras3;
  return major == 2 && minor >= 4 ? KerasRules::tf_keras : KerasRules::keras2;
}

}  // namespace kb::model

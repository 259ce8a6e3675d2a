#include "core/model/keras_rules.h"

namespace kb::model {
namespace {
thread_local KerasRules current = KerasRules::keras2;
}  // namespace

KerasRulesScope::KerasRulesScope(KerasRules rules) : saved_(current) { current = rules; }
KerasRulesScope::~KerasRulesScope() { current = saved_; }

KerasRules current_keras_rules() { return current; }

}  // namespace kb::model

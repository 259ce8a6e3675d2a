// The model layer's JSON (Keras' model and training configs): nlohmann's library, and the reads
// every config needs, each failing with the path of the value in its message.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/dtype.h"
#include "core/graph/shape.h"

namespace kb::model {

using Json = nlohmann::json;

// How deep a config's arrays and objects may nest (a model nested in models 32 deep stays well
// within it).
constexpr int kMaxJsonDepth = 512;

// Parses `text`; `where` names it in the message of a syntax error or of nesting deeper than
// kMaxJsonDepth.
Json parse_json(const std::string& text, const std::string& where);

// config[key] when present and not null, else nullopt; a value of the wrong type fails naming
// `where` and the key.
std::optional<double> opt_number(const Json& config, const char* key, const std::string& where);
std::optional<std::string> opt_string(const Json& config, const char* key,
                                      const std::string& where);
double number_or(const Json& config, const char* key, double fallback, const std::string& where);
int64_t int_or(const Json& config, const char* key, int64_t fallback, const std::string& where);
bool bool_or(const Json& config, const char* key, bool fallback, const std::string& where);
std::string string_or(const Json& config, const char* key, const std::string& fallback,
                      const std::string& where);
std::string required_string(const Json& config, const char* key, const std::string& where);
const Json& required(const Json& config, const char* key, const std::string& where);
// A list of ints where null entries are unknown dims (-1): a batch_input_shape.
Dims dims_of(const Json& list, const std::string& where);
// An int or a list of n ints (Keras' kernel_size=3 or (3, 3)); `fallback` repeated when absent.
std::vector<int64_t> ints_or(const Json& config, const char* key, size_t n, int64_t fallback,
                             const std::string& where);
// A number or a nested list of them (a constant a file writes: Keras 3's __tensor__ values,
// Normalization's mean): its dims (none for a number) and values in row-major order. Ragged
// lists, nesting past `max_rank` and anything but numbers (and booleans, as 0 and 1, where
// `booleans`) fail naming `where`.
void nested_numbers(const Json& value, size_t max_rank, bool booleans, Dims& dims,
                    std::vector<double>& values, const std::string& where);
// A dtype by Keras' name ("float32"); tf.keras' dtype policies ({"class_name": "Policy"}) too.
DType dtype_of(const Json& value, const std::string& where);
// A layer's dtype policy (Keras 3's DTypePolicy, tf.keras' Policy, or a dtype's name): the dtype
// of its variables and the one it computes in. mixed_bfloat16 computes in bfloat16 over float32
// variables; mixed_float16 in float32 here (its training needs a loss-scale optimizer).
struct DTypePolicy {
  DType variable = DType::f32, compute = DType::f32;
};
DTypePolicy dtype_policy_of(const Json& value, const std::string& where);

}  // namespace kb::model

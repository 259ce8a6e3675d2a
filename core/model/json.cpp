#include "core/model/json.h"

#include "core/util/error.h"

namespace kb::model {
namespace {

const Json* present(const Json& config, const char* key) {
  if (!config.is_object()) return nullptr;
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return nullptr;
  return &*it;
}

// Whether the text's arrays and objects nest deeper than `bound` (strings skipped): the value's
// copies, comparisons and the loaders' walks recurse, so the depth a file asks for is bounded
// before any of them runs. Keras' configs nest a few levels per layer and nested model.
bool nests_deeper_than(const std::string& text, int bound) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > bound) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Json parse_json(const std::string& text, const std::string& where) {
  check(!nests_deeper_than(text, kMaxJsonDepth), Status::invalid_argument, where,
        ": nested more than ", kMaxJsonDepth, " levels deep");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(Status::invalid_argument, where, ": not JSON (", e.what(), ")");
  }
}

std::optional<double> opt_number(const Json& config, const char* key, const std::string& where) {
  const Json* v = present(config, key);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>() ? 1.0 : 0.0;
  check(v->is_number(), Status::invalid_argument, where, ": '", key, "' is not a number");
  return v->get<double>();
}

std::optional<std::string> opt_string(const Json& config, const char* key,
                                      const std::string& where) {
  const Json* v = present(config, key);
  if (!v) return std::nullopt;
  check(v->is_string(), Status::invalid_argument, where, ": '", key, "' is not a string");
  return v->get<std::string>();
}

double number_or(const Json& config, const char* key, double fallback, const std::string& where) {
  return opt_number(config, key, where).value_or(fallback);
}

int64_t int_or(const Json& config, const char* key, int64_t fallback, const std::string& where) {
  auto v = opt_number(config, key, where);
  if (!v) return fallback;
  check(*v == static_cast<double>(static_cast<int64_t>(*v)), Status::invalid_argument, where, ": '",
        key, "' is not an integer");
  return static_cast<int64_t>(*v);
}

bool bool_or(const Json& config, const char* key, bool fallback, const std::string& where) {
  auto v = opt_number(config, key, where);
  return v ? *v != 0 : fallback;
}

std::string string_or(const Json& config, const char* key, const std::string& fallback,
                      const std::string& where) {
  return opt_string(config, key, where).value_or(fallback);
}

std::string required_string(const Json& config, const char* key, const std::string& where) {
  auto v = opt_string(config, key, where);
  check(v.has_value(), Status::invalid_argument, where, ": no '", key, "'");
  return *v;
}

const Json& required(const Json& config, const char* key, const std::string& where) {
  const Json* v = present(config, key);
  check(v != nullptr, Status::invalid_argument, where, ": no '", key, "'");
  return *v;
}

Dims dims_of(const Json& list, const std::string& where) {
  check(list.is_array() && list.size() <= 32, Status::invalid_argument, where,
        ": a shape is not a list of at most 32 dims");
  Dims dims;
  for (const Json& d : list) {
    if (d.is_null()) {
      dims.push_back(-1);
      continue;
    }
    check(d.is_number_integer() && d.get<int64_t>() >= 0 && d.get<int64_t>() < (int64_t(1) << 40),
          Status::invalid_argument, where, ": a dim is not a non-negative integer or null");
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

std::vector<int64_t> ints_or(const Json& config, const char* key, size_t n, int64_t fallback,
                             const std::string& where) {
  const Json* v = present(config, key);
  if (!v) return std::vector<int64_t>(n, fallback);
  if (v->is_number_integer()) return std::vector<int64_t>(n, v->get<int64_t>());
  check(v->is_array() && v->size() == n, Status::invalid_argument, where, ": '", key,
        "' is not an integer or a list of ", n);
  std::vector<int64_t> out;
  for (const Json& e : *v) {
    check(e.is_number_integer(), Status::invalid_argument, where, ": '", key,
          "' holds a value that is not an integer");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

namespace {

// The policy's or dtype's name in a layer's "dtype".
std::string policy_name(const Json& value, const std::string& where) {
  if (value.is_object()) {  // {"class_name": "Policy", "config": {"name": "mixed_bfloat16"}}
    const Json& config = required(value, "config", where);
    return required_string(config, "name", where);
  }
  check(value.is_string(), Status::invalid_argument, where, ": a dtype is not a string");
  return value.get<std::string>();
}

DType named_dtype(const std::string& name, const std::string& where) {
  auto t = parse_dtype(name);
  check(t.has_value(), Status::invalid_argument, where, ": unknown dtype '", name, "'");
  return *t;
}

}  // namespace

DType dtype_of(const Json& value, const std::string& where) {
  return dtype_policy_of(value, where).variable;
}

DTypePolicy dtype_policy_of(const Json& value, const std::string& where) {
  std::string name = policy_name(value, where);
  if (name == "mixed_bfloat16") return {DType::f32, DType::bf16};
  if (name == "mixed_float16") return {DType::f32, DType::f32};
  DType t = named_dtype(name, where);
  return {t, t};
}

namespace {

void walk_numbers(const Json& v, size_t depth, size_t max_rank, bool booleans, Dims& dims,
                  std::vector<double>& out, const std::string& where) {
  if (v.is_number() || (booleans && v.is_boolean())) {
    check(depth == dims.size(), Status::invalid_argument, where, ": a ragged list of numbers");
    out.push_back(v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
    return;
  }
  check(v.is_array() && depth < max_rank, Status::invalid_argument, where,
        ": holds something other than numbers");
  if (depth == dims.size()) {
    check(out.empty(), Status::invalid_argument, where, ": a ragged list of numbers");
    dims.push_back(int64_t(v.size()));
  }
  check(depth < dims.size() && dims[depth] == int64_t(v.size()), Status::invalid_argument, where,
        ": a ragged list of numbers");
  for (const Json& item : v) walk_numbers(item, depth + 1, max_rank, booleans, dims, out, where);
}

}  // namespace

void nested_numbers(const Json& value, size_t max_rank, bool booleans, Dims& dims,
                    std::vector<double>& values, const std::string& where) {
  dims.clear();
  values.clear();
  walk_numbers(value, 0, max_rank, booleans, dims, values, where);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  check(n == int64_t(values.size()), Status::invalid_argument, where, ": a ragged list of numbers");
}

}  // namespace kb::model

#include "core/model/options.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"

namespace kb::model {
namespace {

const char* type_name(OptionType t) {
  switch (t) {
    case OptionType::boolean:
      return "a bool";
    case OptionType::integer:
      return "an integer";
    case OptionType::number:
      return "a number";
    case OptionType::string:
      return "a string";
    case OptionType::integer_or_string:
      return "an integer or a string";
    case OptionType::callbacks:
      return "a list of {\"class_name\", \"config\"} objects";
    case OptionType::object:
      return "an object";
    case OptionType::numbers:
      return "a list of numbers";
    case OptionType::class_weights:
      return "an object of {class index: number}";
  }
  return "?";
}

const char* json_type_name(const Json& v) {
  if (v.is_boolean()) return "a bool";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "null";
}

bool integral(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18;
}

bool class_index(const std::string& k) {
  size_t start = !k.empty() && k[0] == '-' ? 1 : 0;
  return k.size() > start && k.size() <= 19 &&
         std::all_of(k.begin() + long(start), k.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool fits(const Json& v, OptionType t) {
  switch (t) {
    case OptionType::boolean:
      return v.is_boolean();
    case OptionType::integer:
      return integral(v);
    case OptionType::number:
      return v.is_number();
    case OptionType::string:
      return v.is_string();
    case OptionType::integer_or_string:
      return v.is_string() || integral(v);
    case OptionType::callbacks:
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const Json& e) {
               return e.is_object() && e.contains("class_name") && e["class_name"].is_string() &&
                      (!e.contains("config") || e["config"].is_object() || e["config"].is_null());
             });
    case OptionType::object:
      return v.is_object();
    case OptionType::numbers:
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_number(); });
    case OptionType::class_weights:
      if (!v.is_object()) return false;
      for (const auto& [k, w] : v.items())
        if (!class_index(k) || !w.is_number()) return false;
      return true;
  }
  return false;
}

// Levenshtein's distance: a misspelt key is named with the key it is nearest to.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string unknown_key_message(const std::string& key, const OptionSet& set) {
  std::string known, nearest;
  size_t best = key.size() / 2 + 2;  // nearer than this: probably a misspelling
  for (const auto& k : set.keys) {
    known += known.empty() ? "" : ", ";
    known += k.name;
    size_t d = distance(key, k.name);
    if (d < best) best = d, nearest = k.name;
  }
  std::string out = "unknown key '" + key + "'";
  if (!nearest.empty()) out += " (did you mean '" + nearest + "'?)";
  return out + "; the " + set.name + " options are: " + known;
}

}  // namespace

void check_options(const Json& options, const OptionSet& set, const std::string& who) {
  check(options.is_object(), Status::invalid_argument, who, ": the ", set.name,
        " options are not a JSON object");
  for (auto it = options.begin(); it != options.end(); ++it) {
    const std::string& key = it.key();
    const Json& value = it.value();
    auto row = std::find_if(set.keys.begin(), set.keys.end(),
                            [&](const OptionKey& k) { return key == k.name; });
    check(row != set.keys.end(), Status::invalid_argument, who, ": ",
          unknown_key_message(key, set));
    check(value.is_null() || fits(value, row->type), Status::invalid_argument, who, ": option '",
          key, "' must be ", type_name(row->type), ", not ", json_type_name(value));
  }
}

Json with_defaults(const Json& options, const OptionSet& set) {
  Json out = options;
  for (const auto& k : set.keys)
    if (k.fallback != nullptr && (!out.contains(k.name) || out[k.name].is_null()))
      out[k.name] = Json::parse(k.fallback);
  return out;
}

}  // namespace kb::model

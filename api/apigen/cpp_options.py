"""C++: the option sets of api/kbackend.toml as structs with Keras' defaults
(`<Set>Arguments`, in include/kbackend_functions.hpp), each writing its options_json."""

_TYPES = {"bool": "bool", "int": "int64_t", "number": "double", "object": "std::string", "callbacks": "std::string",
          "numbers": "std::vector<double>", "class_weights": "std::map<int64_t, double>"}

# What every struct's options_json() writes with: one `add` per type; a key without a default
# is left out while empty.
PRELUDE = '''\
namespace detail {

// options_json of a struct of options: one add per key.
class OptionsJson {
 public:
  explicit OptionsJson(const char* who) : who_(who) {}
  void add(const char* key, bool v) { put(key, v ? "true" : "false"); }
  void add(const char* key, int64_t v) { put(key, std::to_string(v)); }
  void add(const char* key, double v) { put(key, number(v, key)); }
  // A JSON value's text (an optimizer's config, the callbacks' list); empty: left out.
  void add(const char* key, const std::string& json) {
    if (!json.empty()) put(key, json);
  }
  void add(const char* key, const std::vector<double>& v) {
    if (v.empty()) return;
    std::string s = "[";
    for (double x : v) s += (s.size() > 1 ? ", " : "") + number(x, key);
    put(key, s + "]");
  }
  void add(const char* key, const std::map<int64_t, double>& v) {
    if (v.empty()) return;
    std::string s = "{";
    for (const auto& [k, x] : v)
      s += (s.size() > 1 ? ", \\"" : "\\"") + std::to_string(k) + "\\": " + number(x, key);
    put(key, s + "}");
  }
  std::string text() const { return text_ + "}"; }

 private:
  void put(const char* key, const std::string& value) {
    text_ += (text_.size() > 1 ? ", \\"" : "\\"") + std::string(key) + "\\": " + value;
  }
  std::string number(double v, const char* key) const {
    if (!std::isfinite(v))
      throw Error(KB_ERROR_INVALID_ARGUMENT,
                  std::string(who_) + ": option '" + key + "' is not a finite number");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  const char* who_;
  std::string text_ = "{";
};

}  // namespace detail

'''


def structs(api):
    out = []
    for s in api.options.values():
        fields = "".join(f"  /// {k.doc}\n  {_TYPES[k.type]} {k.name}"
                         f"{' = ' + k.literal() if k.has_default else ''};\n" for k in s.keys)
        adds = "".join(f'    o.add("{k.name}", {k.name});\n' for k in s.json_keys())
        json = (f"  /// The keys of options_json these values set (the C arguments left out).\n"
                f"  std::string options_json() const {{\n"
                f'    detail::OptionsJson o("{s.name}");\n{adds}    return o.text();\n  }}\n'
                if adds else "")
        out.append(f"/// Keras' {s.name} arguments that are values, with Keras' defaults: what "
                   f"{api.option_takers(s.name)}\n/// {s.taken_as()}.\n"
                   f"struct {s.type_name('Arguments')} {{\n{fields}{json}}};\n\n")
    return "".join(out)

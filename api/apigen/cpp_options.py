"""C++: the option sets of api/kbackend.toml as structs with Keras' defaults
(`<Set>Arguments`, in include/kbackend_functions.hpp), each writing its options_json."""

_TYPES = {"bool": "bool", "int": "int64_t", "number": "double", "object": "std::string",
          "callbacks": "std::vector<KerasCallback>", "numbers": "std::vector<double>",
          "class_weights": "std::map<int64_t, double>", "string": "std::string",
          "int_or_string": "std::variant<int64_t, std::string>"}


def _type(k):
    """A key's C++ type: a callback's number without a default is optional (Keras' None)."""
    if k.type == "number" and not k.has_default:
        return "std::optional<double>"
    return _TYPES[k.type]


def _initializer(k):
    if not k.has_default:
        return ""
    if k.type in ("string", "int_or_string") and isinstance(k.default, str):
        return f' = std::string("{k.default}")' if k.type == "int_or_string" else f' = "{k.default}"'
    return " = " + k.literal()

# What every struct's options_json() writes with: one `add` per type; a key without a default
# is left out while empty.
PRELUDE = '''\
/// One of Keras' callbacks for fit (FitArguments::callbacks): its class and its config as JSON
/// text. The structs of namespace kbackend::callbacks (EarlyStopping, ...) convert to it.
struct KerasCallback {
  std::string class_name;   ///< Keras' class name: "EarlyStopping"
  std::string config_json;  ///< its arguments as a JSON object
};

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
  // A string value (a callback's filepath), quoted and escaped as JSON.
  void add_text(const char* key, const std::string& v) { put(key, quoted(v)); }
  void add(const char* key, const std::optional<double>& v) {
    if (v) add(key, *v);
  }
  void add(const char* key, const std::variant<int64_t, std::string>& v) {
    if (const int64_t* i = std::get_if<int64_t>(&v))
      add(key, *i);
    else
      add_text(key, std::get<std::string>(v));
  }
  void add(const char* key, const std::vector<KerasCallback>& v) {
    if (v.empty()) return;
    std::string s = "[";
    for (const auto& c : v)
      s += (s.size() > 1 ? ", " : "") + std::string("{\\"class_name\\": ") + quoted(c.class_name) +
           ", \\"config\\": " + (c.config_json.empty() ? "{}" : c.config_json) + "}";
    put(key, s + "]");
  }
  std::string text() const { return text_ + "}"; }

 private:
  void put(const char* key, const std::string& value) {
    text_ += (text_.size() > 1 ? ", \\"" : "\\"") + std::string(key) + "\\": " + value;
  }
  static std::string quoted(const std::string& v) {
    std::string s = "\\"";
    for (unsigned char c : v) {
      if (c == '"' || c == '\\\\') {
        s += '\\\\';
        s += char(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\\\u%04x", c);
        s += buf;
      } else {
        s += char(c);
      }
    }
    return s + "\\"";
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
        fields = "".join(f"  /// {k.doc}\n  {_type(k)} {k.name}{_initializer(k)};\n"
                         for k in s.keys)
        adds = "".join(f'    o.add("{k.name}", {k.name});\n' for k in s.json_keys())
        json = (f"  /// The keys of options_json these values set (the C arguments left out).\n"
                f"  std::string options_json() const {{\n"
                f'    detail::OptionsJson o("{s.name}");\n{adds}    return o.text();\n  }}\n'
                if adds else "")
        out.append(f"/// Keras' {s.name} arguments that are values, with Keras' defaults: what "
                   f"{api.option_takers(s.name)}\n/// {s.taken_as()}.\n"
                   f"struct {s.type_name('Arguments')} {{\n{fields}{json}}};\n\n")
    return "".join(out)


def callback_structs(api):
    """namespace kbackend::callbacks: a struct per [callbacks.CLASS] with Keras 3's defaults,
    converting to KerasCallback."""
    out = ["/// Keras' callbacks that fit runs natively (keras.callbacks), with Keras 3's arguments "
           "and\n/// defaults: `o.callbacks = {callbacks::EarlyStopping{.monitor = \"loss\", "
           ".patience = 2}}`.\nnamespace callbacks {\n\n"]
    for s in api.callbacks.values():
        fields = "".join(f"  /// {k.doc}\n  {_type(k)} {k.name}{_initializer(k)};\n"
                         for k in s.keys)
        adds = "".join(f'    o.{"add_text" if k.type == "string" else "add"}("{k.name}", '
                       f'{k.name});\n' for k in s.keys)
        out.append(f"/// Keras' {s.name}.\nstruct {s.name} {{\n{fields}"
                   f"  /// The entry of FitArguments::callbacks.\n"
                   f"  operator KerasCallback() const {{\n"
                   f'    detail::OptionsJson o("{s.name}");\n{adds}'
                   f'    return {{"{s.name}", o.text()}};\n  }}\n}};\n\n')
    out.append("}  // namespace callbacks\n\n")
    return "".join(out)

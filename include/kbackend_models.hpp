// Keras models for C++: kbackend::Model over the C ABI's kb_model_* (C++17, header-only, on
// top of kbackend.hpp).
//
//   #include <kbackend_models.hpp>
//   kbackend::Model model = kbackend::Model::load("model.h5");   // a file Keras saved
//   kbackend::FitOptions options;
//   options.epochs = 5;
//   kbackend::History h = model.fit({x}, {y}, options);           // x, y: kbackend::Tensor
//   std::vector<kbackend::Tensor> p = model.predict({x});
//   model.save("tuned.h5");
//
// Model is move-only and releases its handle; failures throw kbackend::Error. Names follow
// Keras (fit, evaluate, predict, train_on_batch, ...); arrays are Tensors of values
// (Tensor::from), one row per sample. A fit callback is a std::function that returns true to
// stop; an exception it throws stops training and comes out of fit.
#ifndef KBACKEND_MODELS_HPP
#define KBACKEND_MODELS_HPP

#include "kbackend.hpp"

#include <cctype>
#include <charconv>
#include <limits>
#include <map>

namespace kbackend {

namespace detail {

// The library's logs and history: one JSON object of numbers, nulls (a value that was not a
// number: NaN here) or lists of them, keyed by Keras' names. Anything else is an internal error.
class NumbersJson {
 public:
  explicit NumbersJson(std::string text) : s_(std::move(text)) {}
  std::map<std::string, std::vector<double>> parse() {
    std::map<std::string, std::vector<double>> out;
    expect('{');
    if (peek() == '}') return ++i_, out;
    for (;;) {
      std::string key = string();
      expect(':');
      std::vector<double>& values = out[key];
      if (peek() == '[') {
        ++i_;
        if (peek() == ']') {
          ++i_;
        } else {
          for (values.push_back(number()); peek() == ','; values.push_back(number())) ++i_;
          expect(']');
        }
      } else {
        values.push_back(number());
      }
      if (peek() == '}') return ++i_, out;
      expect(',');
    }
  }

 private:
  char peek() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ >= s_.size()) bad();
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) bad();
    ++i_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && ++i_ >= s_.size()) bad();
      out += s_[i_++];
    }
    expect('"');
    return out;
  }
  double number() {
    if (peek() == 'n') {
      if (s_.compare(i_, 4, "null") != 0) bad();
      i_ += 4;
      return std::numeric_limits<double>::quiet_NaN();
    }
    double v = 0;  // from_chars: the C locale's digits whatever the program's locale
    auto [end, error] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v);
    if (error != std::errc()) bad();
    i_ = size_t(end - s_.data());
    return v;
  }
  [[noreturn]] void bad() const {
    throw Error(KB_ERROR_INTERNAL, "kbackend: the library's logs are not numbers: " + s_);
  }
  std::string s_;
  size_t i_ = 0;
};

}  // namespace detail

/// What fit returns: each logged value per epoch (Keras' History.history: "loss", the metrics,
/// "val_loss"; NaN where a value was not a number), and the library's JSON of it.
struct History {
  std::string json;                                   ///< {"loss": [...], "acc": [...], ...}
  std::map<std::string, std::vector<double>> values;  ///< "loss": one value per epoch, ...
};

/// Keras' logs of a batch or an epoch, as fit's logs_callback gets them ("loss", the metrics).
using Logs = std::map<std::string, double>;

/// Keras' fit arguments beyond x and y: the values (FitArguments, from the description's
/// [options.fit]: batch_size, epochs, shuffle, class_weight, ...), and the arrays and callback.
struct FitOptions : FitArguments {
  std::vector<Tensor> sample_weight;  ///< Keras' sample_weight, one per output; empty: none
  /// Keras' validation_data (x, y and sample weights, one per input or output); empty: none.
  ///@{
  std::vector<Tensor> validation_x, validation_y, validation_sample_weight;
  ///@}
  /// After each batch (batch >= 0) and each epoch (batch == -1), with the logs as JSON text
  /// ({"loss": ..., "acc": ...}); true stops training.
  std::function<bool(int64_t epoch, int64_t batch, const std::string& logs_json)> callback;
  /// As callback, with the logs as values (called after callback, when both are set).
  std::function<bool(int64_t epoch, int64_t batch, const Logs& logs)> logs_callback;
};

/// A Keras model (kb_model): loaded, built from JSON, compiled, trained, saved; move-only.
class Model {
 public:
  /// A model from a Keras HDF5 file; compile: also from its training_config, optimizer state too.
  static Model load(const std::string& path, bool compile = true) {
    kb_model* m = nullptr;
    check(kb_model_load(path.c_str(), compile ? 1 : 0, &m));
    return Model(m);
  }
  /// A model from Keras' JSON (model.to_json()), its weights initialized as Keras does.
  static Model from_json(const std::string& json) {
    kb_model* m = nullptr;
    check(kb_model_from_json(json.c_str(), &m));
    return Model(m);
  }
  /// A copy (uncompiled, the same weights' values) whose float32 layers take the dtype policy
  /// `policy` ("mixed_bfloat16": bfloat16 computation over float32 variables), as Keras'
  /// clone_model with each layer's dtype set.
  Model with_dtype_policy(const std::string& policy) const {
    kb_model* m = nullptr;
    check(kb_model_with_dtype_policy(m_, policy.c_str(), &m));
    return Model(m);
  }
  /// Moving transfers the model and leaves the source empty.
  ///@{
  Model(Model&& other) noexcept : m_(std::exchange(other.m_, nullptr)) {}
  Model& operator=(Model&& other) noexcept {
    if (this != &other) kb_model_release(std::exchange(m_, std::exchange(other.m_, nullptr)));
    return *this;
  }
  ///@}
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() { kb_model_release(m_); }
  /// The C handle, still owned by this Model.
  kb_model* get() const noexcept { return m_; }

  /// Keras' model.to_json().
  std::string to_json() const { return text(kb_model_to_json); }
  /// Keras' model.summary() as text.
  std::string summary() const { return text(kb_model_summary); }
  /// Keras' model.save: an HDF5 file Keras loads (with the optimizer's state if asked).
  void save(const std::string& path, bool include_optimizer = true) const {
    check(kb_model_save(m_, path.c_str(), include_optimizer ? 1 : 0));
  }
  /// save with its arguments as values.
  void save(const std::string& path, const SaveArguments& arguments) const {
    save(path, arguments.include_optimizer);
  }
  /// Keras' model.save_weights (HDF5).
  void save_weights(const std::string& path) const {
    check(kb_model_save_weights(m_, path.c_str()));
  }
  /// Keras' model.load_weights: by topology, or by layer name.
  void load_weights(const std::string& path, bool by_name = false) {
    check(kb_model_load_weights(m_, path.c_str(), by_name ? 1 : 0));
  }

  /// optimizer: a Keras name ("adam") or JSON {"class_name", "config"}; options_json: see
  /// kb_model_compile ({"optimizer": {"lr": 0.01}, "loss_weights": [...]}).
  void compile(const std::string& optimizer, const std::vector<std::string>& losses,
               const std::vector<std::string>& metrics = {}, const std::string& options_json = "") {
    std::vector<const char*> l = c_strings(losses), m = c_strings(metrics);
    check(kb_model_compile(m_, optimizer.c_str(), l.data(), l.size(), m.data(), m.size(),
                           options_json.empty() ? nullptr : options_json.c_str()));
  }
  /// compile with its options as values (loss_weights, the optimizer's config).
  void compile(const std::string& optimizer, const std::vector<std::string>& losses,
               const std::vector<std::string>& metrics, const CompileArguments& arguments) {
    compile(optimizer, losses, metrics, arguments.options_json());
  }

  /// Keras' fit over x (one tensor per input) and y (one per output).
  History fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
              const FitOptions& options = {}) {
    std::vector<kb_tensor*> xs = detail::handles(x), ys = detail::handles(y);
    std::string opts = options.options_json();
    CallbackState state{&options.callback, &options.logs_callback, nullptr};
    const char* history = nullptr;
    kb_model_callback cb = options.callback || options.logs_callback ? &trampoline : nullptr;
    kb_status status;
    if (options.sample_weight.empty() && options.validation_x.empty() &&
        options.validation_y.empty()) {
      status = kb_model_fit(m_, xs.data(), xs.size(), ys.data(), ys.size(), options.batch_size,
                            options.epochs, int32_t(options.verbose), opts.c_str(), cb, &state,
                            &history);
    } else {
      std::vector<kb_tensor*> sw = detail::handles(options.sample_weight),
                              vx = detail::handles(options.validation_x),
                              vy = detail::handles(options.validation_y),
                              vsw = detail::handles(options.validation_sample_weight);
      status = kb_model_fit_weighted(m_, xs.data(), xs.size(), ys.data(), ys.size(), sw.data(),
                                     sw.size(), vx.data(), vx.size(), vy.data(), vy.size(),
                                     vsw.data(), vsw.size(), options.batch_size, options.epochs,
                                     int32_t(options.verbose), opts.c_str(), cb, &state, &history);
    }
    if (state.error) std::rethrow_exception(state.error);
    check(status);
    History h{history ? history : "", {}};
    h.values = detail::NumbersJson(h.json).parse();
    return h;
  }
  /// Keras' evaluate: the loss and the metrics (metrics_names()); verbose 1: Keras' progress bar.
  std::vector<double> evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                               int64_t batch_size = 32, int32_t verbose = 1) {
    std::vector<kb_tensor*> xs = detail::handles(x), ys = detail::handles(y);
    kb_tensor* out = nullptr;
    check(kb_model_evaluate(m_, xs.data(), xs.size(), ys.data(), ys.size(), batch_size, verbose,
                            &out));
    return Tensor::adopt(out).to_vector<double>();
  }
  /// evaluate with its arguments as values.
  std::vector<double> evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                               const EvaluateArguments& arguments) {
    return evaluate(x, y, arguments.batch_size, int32_t(arguments.verbose));
  }
  /// One gradient step on one batch; the loss and the metrics.
  std::vector<double> train_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
    return on_batch(kb_model_train_on_batch, x, y);
  }
  /// The loss and the metrics of one batch, without training.
  std::vector<double> test_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
    return on_batch(kb_model_test_on_batch, x, y);
  }
  /// The names of evaluate's values, as a JSON list (["loss", "acc"]).
  std::string metrics_names() const { return text(kb_model_metrics_names); }
  /// Keras' predict: one tensor per output.
  std::vector<Tensor> predict(const std::vector<Tensor>& x, int64_t batch_size = 32,
                              int32_t verbose = 0) {
    std::vector<kb_tensor*> xs = detail::handles(x);
    kb_tensor_list* out = nullptr;
    check(kb_model_predict(m_, xs.data(), xs.size(), batch_size, verbose, &out));
    return detail::take_list(out);
  }
  /// predict with its arguments as values.
  std::vector<Tensor> predict(const std::vector<Tensor>& x, const PredictArguments& arguments) {
    return predict(x, arguments.batch_size, int32_t(arguments.verbose));
  }
  /// The outputs of one batch.
  std::vector<Tensor> predict_on_batch(const std::vector<Tensor>& x) {
    std::vector<kb_tensor*> xs = detail::handles(x);
    kb_tensor_list* out = nullptr;
    check(kb_model_predict_on_batch(m_, xs.data(), xs.size(), &out));
    return detail::take_list(out);
  }

  /// How many layers the model has (Keras' len(model.layers)).
  size_t layer_count() const {
    size_t n = 0;
    check(kb_model_layer_count(m_, &n));
    return n;
  }
  /// Layer i's name, class name and config (JSON).
  ///@{
  std::string layer_name(size_t i) const { return layer_text(kb_model_layer_name, i); }
  std::string layer_class(size_t i) const { return layer_text(kb_model_layer_class, i); }
  std::string layer_config(size_t i) const { return layer_text(kb_model_layer_config, i); }
  ///@}
  /// Layer i's weights' values (Keras' layer.get_weights()).
  std::vector<Tensor> layer_weights(size_t i) const {
    kb_tensor_list* out = nullptr;
    check(kb_model_layer_get_weights(m_, i, &out));
    return detail::take_list(out);
  }
  /// Keras' layer.set_weights: one value per weight, in order.
  void set_layer_weights(size_t i, const std::vector<Tensor>& values) {
    std::vector<kb_tensor*> v = detail::handles(values);
    check(kb_model_layer_set_weights(m_, i, v.data(), v.size()));
  }
  /// The model as graph values: input placeholders, outputs, weight variables.
  ///@{
  std::vector<Tensor> inputs() const { return tensors(kb_model_inputs); }
  std::vector<Tensor> outputs() const { return tensors(kb_model_outputs); }
  std::vector<Tensor> weights() const { return tensors(kb_model_weights); }
  ///@}
  /// Keras' model.add_loss: a scalar over the model's tensors, in the loss from the next compile.
  void add_loss(const Tensor& term) { check(kb_model_add_loss(m_, term.get())); }
  /// After compile: the loss as a graph value over the inputs, the targets (one per output), the
  /// per-sample weights (one per output) and the learning phase, and the updates of one training
  /// step, for a program's own Function or gradients.
  ///@{
  Tensor total_loss() const {
    kb_tensor* out = nullptr;
    check(kb_model_total_loss(m_, &out));
    return Tensor::adopt(out);
  }
  std::vector<Tensor> targets() const { return tensors(kb_model_targets); }
  std::vector<Tensor> sample_weights() const { return tensors(kb_model_sample_weights); }
  std::vector<Tensor> updates() const { return tensors(kb_model_updates); }
  ///@}
  /// Keras' model.reset_states(): the stateful recurrent layers' states back to zeros.
  void reset_states() { check(kb_model_reset_states(m_)); }

 private:
  explicit Model(kb_model* m) noexcept : m_(m) {}
  struct CallbackState {
    const std::function<bool(int64_t, int64_t, const std::string&)>* fn;
    const std::function<bool(int64_t, int64_t, const Logs&)>* logs_fn;
    std::exception_ptr error;
  };
  static int32_t trampoline(void* user, int64_t epoch, int64_t batch, const char* logs) {
    auto* s = static_cast<CallbackState*>(user);
    try {
      std::string text = logs ? logs : "";
      bool stop = *s->fn && (*s->fn)(epoch, batch, text);
      if (*s->logs_fn) {
        Logs values;
        for (const auto& [k, v] : detail::NumbersJson(text).parse())
          values[k] = v.empty() ? std::numeric_limits<double>::quiet_NaN() : v[0];
        stop = (*s->logs_fn)(epoch, batch, values) || stop;
      }
      return stop ? 1 : 0;
    } catch (...) {
      s->error = std::current_exception();
      kb_set_error(KB_ERROR_INVALID_ARGUMENT, "a C++ exception");  // fit fails, rethrown after
      return 1;
    }
  }
  static std::vector<const char*> c_strings(const std::vector<std::string>& v) {
    std::vector<const char*> out;
    for (const auto& s : v) out.push_back(s.c_str());
    return out;
  }
  std::string text(kb_status (*f)(kb_model*, const char**)) const {
    const char* out = nullptr;
    check(f(m_, &out));
    return out ? out : "";
  }
  std::string layer_text(kb_status (*f)(kb_model*, size_t, const char**), size_t i) const {
    const char* out = nullptr;
    check(f(m_, i, &out));
    return out ? out : "";
  }
  std::vector<Tensor> tensors(kb_status (*f)(kb_model*, kb_tensor_list**)) const {
    kb_tensor_list* out = nullptr;
    check(f(m_, &out));
    return detail::take_list(out);
  }
  std::vector<double> on_batch(kb_status (*f)(kb_model*, kb_tensor* const*, size_t,
                                              kb_tensor* const*, size_t, kb_tensor**),
                               const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
    std::vector<kb_tensor*> xs = detail::handles(x), ys = detail::handles(y);
    kb_tensor* out = nullptr;
    check(f(m_, xs.data(), xs.size(), ys.data(), ys.size(), &out));
    return Tensor::adopt(out).to_vector<double>();
  }

  kb_model* m_ = nullptr;
};

/// A custom layer while its function runs: the weights it asks for (made the first time).
class CustomLayer {
 public:
  /// Wraps the layer handle a kb_layer_function receives (borrowed).
  explicit CustomLayer(kb_layer* layer) noexcept : l_(layer) {}
  /// initializer_json: a Keras initializer ("\"ones\"", {"class_name": "RandomNormal", ...}).
  Tensor weight(const std::string& name, const std::vector<int64_t>& shape,
                const std::string& initializer_json = "\"zeros\"", bool trainable = true) const {
    kb_tensor* out = nullptr;
    check(kb_model_layer_weight(l_, name.c_str(), shape.data(), shape.size(),
                                initializer_json.c_str(), trainable ? 1 : 0, &out));
    return Tensor::adopt(out);
  }

 private:
  kb_layer* l_;
};

/// Builds a custom layer's outputs from its config (JSON) and inputs with the backend functions.
using LayerFunction = std::function<std::vector<Tensor>(
    const CustomLayer& layer, const std::string& config_json, const std::vector<Tensor>& inputs)>;

namespace detail {
/// The registered functions live as long as the program (the library keeps pointers to them).
inline std::vector<std::unique_ptr<LayerFunction>>& layer_functions() {
  static std::vector<std::unique_ptr<LayerFunction>> functions;
  return functions;
}
inline std::mutex& layer_functions_mutex() {
  static std::mutex mu;
  return mu;
}
inline kb_status layer_trampoline(void* user, kb_layer* layer, const char* config,
                                  kb_tensor* const* inputs, size_t n, kb_tensor** outputs,
                                  size_t capacity, size_t* count) noexcept {
  try {
    std::vector<Tensor> in;
    for (size_t i = 0; i < n; ++i) in.push_back(Tensor::borrow(inputs[i]));
    std::vector<Tensor> out = (*static_cast<LayerFunction*>(user))(CustomLayer(layer), config, in);
    if (out.size() > capacity) {
      kb_set_error(KB_ERROR_INVALID_ARGUMENT, "too many outputs");
      return KB_ERROR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < out.size(); ++i) outputs[i] = out[i].release();
    *count = out.size();
    return KB_OK;
  } catch (const Error& e) {
    kb_set_error(e.status(), e.what());
    return e.status();
  } catch (const std::exception& e) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, e.what());
    return KB_ERROR_INVALID_ARGUMENT;
  } catch (...) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "the layer function threw");
    return KB_ERROR_INVALID_ARGUMENT;
  }
}
}  // namespace detail

/// Registers a Keras class name (not a built-in one) for models that use the layer; an
/// exception the function throws becomes the model's error, naming the layer.
inline void register_layer(const std::string& class_name, LayerFunction function) {
  auto f = std::make_unique<LayerFunction>(std::move(function));
  std::lock_guard<std::mutex> lock(detail::layer_functions_mutex());
  check(kb_model_register_layer(class_name.c_str(), &detail::layer_trampoline, f.get()));
  /// Kept for the program's life: models made before a class is registered again still use it.
  detail::layer_functions().push_back(std::move(f));
}

}  // namespace kbackend

#include "kbackend_model_functions.hpp"

#endif  // KBACKEND_MODELS_HPP

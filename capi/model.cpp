// Keras models: kb_model_* over core/model.

#include "capi/handles.h"

#include <cmath>

#include "core/api/api.h"
#include "core/model/custom_layer.h"
#include "core/model/export/onnx_export.h"
#include "core/model/mixed_precision.h"
#include "core/model/model_file.h"
#include "core/model/option_sets.h"
#include "core/model/summary.h"
#include "core/model/training.h"
#include "core/ops/build.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::string_arg;

struct kb_layer {
  kb::model::CustomLayer* layer;
};

struct kb_model {
  std::shared_ptr<model::Model> model;
  // The strings handed out, one per function that returns one.
  std::string json, history, names, summary, layer_name, layer_class, layer_config;
};

namespace {

model::Model& model_arg(kb_model* m, const char* who) {
  check(m != nullptr && m->model != nullptr, Status::invalid_argument, who, ": model is NULL");
  return *m->model;
}

model::Training& compiled(kb_model* m, const char* who) {
  model::Training* t = model_arg(m, who).training();
  check(t != nullptr, Status::invalid_argument, who,
        ": the model is not compiled (kb_model_compile)");
  return *t;
}

// Values given as tensors: constants (kb_tensor_from_data) or anything kb_eval can compute.
model::Buffers arrays_arg(kb_tensor* const* xs, size_t n, const char* who, const char* what) {
  check(xs != nullptr || n == 0, Status::invalid_argument, who, ": ", what, " is NULL");
  model::Buffers out;
  for (const NodePtr& x : capi::tensor_list_arg(xs, n, who, what))
    out.push_back(x->is(ops::Constant) && x->value && x->value->device == Device::cpu
                      ? x->value
                      : evaluate(x));
  return out;
}

kb_tensor* values_tensor(const std::vector<double>& values) {
  auto b = Buffer::make(DType::f64, {int64_t(values.size())});
  std::copy(values.begin(), values.end(), b->as<double>());
  return capi::wrap(constant_node(b));
}

kb_tensor_list* arrays_list(const model::Buffers& bs) {
  std::vector<NodePtr> out;
  for (const auto& b : bs) out.push_back(constant_node(b));
  return capi::wrap_list(std::move(out));
}

// options_json (NULL: no options), checked against its set in api/kbackend.toml.
model::Json options_arg(const char* json, const model::OptionSet& set, const char* who) {
  if (json == nullptr) return model::Json::object();
  model::Json o = model::parse_json(json, std::string(who) + ": options_json");
  model::check_options(o, set, std::string(who) + ": options_json");
  return o;
}

const std::shared_ptr<model::Layer>& layer_arg(kb_model* m, size_t index, const char* who) {
  const auto& layers = model_arg(m, who).layers();
  check(index < layers.size(), Status::invalid_argument, who, ": layer ", index, " of a model of ",
        layers.size());
  return layers[index];
}

// kb_model_fit's options_json as FitOptions (their values checked by Training::fit).
model::FitOptions fit_options(const char* options_json, int64_t batch_size, int64_t epochs,
                              int32_t verbose, const char* who) {
  model::Json o = options_arg(options_json, model::fit_option_set(), who);
  model::FitOptions f = model::fit_options_from_json(o, std::string(who) + ": options_json");
  f.batch_size = batch_size;
  f.epochs = epochs;
  f.verbose = verbose;
  return f;
}

kb_status run_fit(kb_model* m, const char* who, model::FitOptions f, kb_tensor* const* x,
                  size_t num_x, kb_tensor* const* y, size_t num_y, kb_model_callback callback,
                  void* user_data, const char** history_json) {
  return guard(who, [&] {
    model::Training& t = compiled(m, who);
    model::FitCallback cb;
    if (callback)
      cb = [&](int64_t epoch, int64_t batch, const model::Json& logs) {
        kb_clear_error();
        if (callback(user_data, epoch, batch, logs.dump().c_str()) == 0) return false;
        // Set an error and stopped: the program's callback failed, which ends fit at once (as
        // an exception does in Keras: no on_train_end).
        if (kb_last_error_code() != KB_OK) {
          std::string message = kb_last_error_message();
          fail(Status(kb_last_error_code()), who,
               ": the callback failed: ", message.empty() ? "(no message)" : message);
        }
        return true;
      };
    model::Json h = t.fit(arrays_arg(x, num_x, who, "x"), arrays_arg(y, num_y, who, "y"), f, cb);
    m->history = h.dump();
    if (history_json) *history_json = m->history.c_str();
  });
}

}  // namespace

extern "C" {

KB_API kb_status kb_model_load(const char* path, int32_t compile, kb_model** out) {
  return guard("model_load", [&] {
    out_arg(out, "model_load");
    auto m = model::load_model(string_arg(path, "model_load", "path"), compile != 0);
    *out = new kb_model{m, {}, {}, {}, {}, {}, {}, {}};
  });
}

KB_API kb_status kb_model_from_json(const char* json, kb_model** out) {
  return guard("model_from_json", [&] {
    out_arg(out, "model_from_json");
    auto config = model::parse_json(string_arg(json, "model_from_json", "json"), "model_from_json");
    *out = new kb_model{model::Model::from_config(config), {}, {}, {}, {}, {}, {}, {}};
  });
}

KB_API kb_status kb_model_to_json(kb_model* m, const char** out) {
  return guard("model_to_json", [&] {
    out_arg(out, "model_to_json");
    m->json = model_arg(m, "model_to_json").config().dump();
    *out = m->json.c_str();
  });
}

KB_API kb_status kb_model_with_dtype_policy(kb_model* m, const char* policy, kb_model** out) {
  return guard("model_with_dtype_policy", [&] {
    const char* who = "model_with_dtype_policy";
    out_arg(out, who);
    auto copy = model::with_dtype_policy(model_arg(m, who), string_arg(policy, who, "policy"));
    *out = new kb_model{copy, {}, {}, {}, {}, {}, {}, {}};
  });
}

KB_API kb_status kb_model_save(kb_model* m, const char* path, int32_t include_optimizer) {
  return guard("model_save", [&] {
    model::save_model(model_arg(m, "model_save"), string_arg(path, "model_save", "path"),
                      include_optimizer != 0);
  });
}

KB_API kb_status kb_model_save_weights(kb_model* m, const char* path) {
  return guard("model_save_weights", [&] {
    model::save_weights(model_arg(m, "model_save_weights"),
                        string_arg(path, "model_save_weights", "path"));
  });
}

KB_API kb_status kb_model_export_onnx(kb_model* m, const char* path, const char* options_json) {
  return guard("model_export_onnx", [&] {
    model::Json o = options_arg(options_json, model::export_onnx_option_set(), "model_export_onnx");
    model::export_onnx(model_arg(m, "model_export_onnx"),
                       string_arg(path, "model_export_onnx", "path"),
                       model::onnx_export_options_from_json(o, "model_export_onnx: options_json"),
                       "model_export_onnx");
  });
}

KB_API kb_status kb_model_load_weights(kb_model* m, const char* path, int32_t by_name) {
  return guard("model_load_weights", [&] {
    model::load_weights(model_arg(m, "model_load_weights"),
                        string_arg(path, "model_load_weights", "path"), by_name != 0);
  });
}

KB_API kb_status kb_model_compile(kb_model* m, const char* optimizer, const char* const* losses,
                                  size_t num_losses, const char* const* metrics, size_t num_metrics,
                                  const char* options_json) {
  return guard("model_compile", [&] {
    model::Model& mm = model_arg(m, "model_compile");
    std::string opt = string_arg(optimizer, "model_compile", "optimizer");
    model::Json spec = !opt.empty() && opt[0] == '{'
                           ? model::parse_json(opt, "model_compile: optimizer")
                           : model::Json(opt);
    check(losses != nullptr && num_losses > 0, Status::invalid_argument,
          "model_compile: no loss given");
    check(metrics != nullptr || num_metrics == 0, Status::invalid_argument,
          "model_compile: metrics is NULL");
    std::vector<std::string> ls, ms;
    for (size_t i = 0; i < num_losses; ++i)
      ls.push_back(string_arg(losses[i], "model_compile", "a loss"));
    for (size_t i = 0; i < num_metrics; ++i)
      ms.push_back(string_arg(metrics[i], "model_compile", "a metric"));
    model::Json o = options_arg(options_json, model::compile_option_set(), "model_compile");
    std::vector<double> weights;
    if (o.contains("loss_weights"))  // a list of numbers (checked against its row)
      for (const auto& w : o["loss_weights"]) weights.push_back(w.get<double>());
    mm.set_training(std::make_unique<model::Training>(
        mm, spec, o.contains("optimizer") ? o["optimizer"] : model::Json(), ls, ms, weights));
  });
}

KB_API kb_status kb_model_learning_rate(kb_model* m, double* out) {
  return guard("model_learning_rate", [&] {
    out_arg(out, "model_learning_rate");
    *out = compiled(m, "model_learning_rate").optimizer().learning_rate();
  });
}

KB_API kb_status kb_model_set_learning_rate(kb_model* m, double learning_rate) {
  return guard("model_set_learning_rate", [&] {
    check(std::isfinite(learning_rate) && learning_rate >= 0, Status::invalid_argument,
          "model_set_learning_rate: the learning rate must be a finite number >= 0");
    compiled(m, "model_set_learning_rate")
        .optimizer()
        .set_learning_rate(learning_rate, "model_set_learning_rate");
  });
}

KB_API kb_status kb_model_fit(kb_model* m, kb_tensor* const* x, size_t num_x, kb_tensor* const* y,
                              size_t num_y, int64_t batch_size, int64_t epochs, int32_t verbose,
                              const char* options_json, kb_model_callback callback, void* user_data,
                              const char** history_json) {
  model::FitOptions f;
  kb_status s = guard("model_fit", [&] {
    f = fit_options(options_json, batch_size, epochs, verbose, "model_fit");
  });
  if (s != KB_OK) return s;
  return run_fit(m, "model_fit", f, x, num_x, y, num_y, callback, user_data, history_json);
}

KB_API kb_status kb_model_fit_weighted(
    kb_model* m, kb_tensor* const* x, size_t num_x, kb_tensor* const* y, size_t num_y,
    kb_tensor* const* sample_weights, size_t num_sample_weights, kb_tensor* const* validation_x,
    size_t num_validation_x, kb_tensor* const* validation_y, size_t num_validation_y,
    kb_tensor* const* validation_sample_weights, size_t num_validation_sample_weights,
    int64_t batch_size, int64_t epochs, int32_t verbose, const char* options_json,
    kb_model_callback callback, void* user_data, const char** history_json) {
  const char* who = "model_fit_weighted";
  model::FitOptions f;
  kb_status s = guard(who, [&] {
    f = fit_options(options_json, batch_size, epochs, verbose, who);
    f.sample_weight = arrays_arg(sample_weights, num_sample_weights, who, "sample_weights");
    f.validation_x = arrays_arg(validation_x, num_validation_x, who, "validation_x");
    f.validation_y = arrays_arg(validation_y, num_validation_y, who, "validation_y");
    f.validation_sample_weight = arrays_arg(
        validation_sample_weights, num_validation_sample_weights, who, "validation_sample_weights");
  });
  if (s != KB_OK) return s;
  return run_fit(m, who, f, x, num_x, y, num_y, callback, user_data, history_json);
}

KB_API kb_status kb_model_evaluate(kb_model* m, kb_tensor* const* x, size_t num_x,
                                   kb_tensor* const* y, size_t num_y, int64_t batch_size,
                                   int32_t verbose, kb_tensor** out) {
  return guard("model_evaluate", [&] {
    out_arg(out, "model_evaluate");
    auto v = compiled(m, "model_evaluate")
                 .evaluate(arrays_arg(x, num_x, "model_evaluate", "x"),
                           arrays_arg(y, num_y, "model_evaluate", "y"), batch_size, verbose);
    *out = values_tensor(v);
  });
}

KB_API kb_status kb_model_train_on_batch(kb_model* m, kb_tensor* const* x, size_t num_x,
                                         kb_tensor* const* y, size_t num_y, kb_tensor** out) {
  return guard("model_train_on_batch", [&] {
    out_arg(out, "model_train_on_batch");
    auto v = compiled(m, "model_train_on_batch")
                 .train_on_batch(arrays_arg(x, num_x, "model_train_on_batch", "x"),
                                 arrays_arg(y, num_y, "model_train_on_batch", "y"));
    *out = values_tensor(v);
  });
}

KB_API kb_status kb_model_test_on_batch(kb_model* m, kb_tensor* const* x, size_t num_x,
                                        kb_tensor* const* y, size_t num_y, kb_tensor** out) {
  return guard("model_test_on_batch", [&] {
    out_arg(out, "model_test_on_batch");
    auto v = compiled(m, "model_test_on_batch")
                 .test_on_batch(arrays_arg(x, num_x, "model_test_on_batch", "x"),
                                arrays_arg(y, num_y, "model_test_on_batch", "y"));
    *out = values_tensor(v);
  });
}

KB_API kb_status kb_model_metrics_names(kb_model* m, const char** out) {
  return guard("model_metrics_names", [&] {
    out_arg(out, "model_metrics_names");
    m->names = model::Json(compiled(m, "model_metrics_names").metrics_names()).dump();
    *out = m->names.c_str();
  });
}

KB_API kb_status kb_model_predict(kb_model* m, kb_tensor* const* x, size_t num_x,
                                  int64_t batch_size, int32_t verbose, kb_tensor_list** out) {
  return guard("model_predict", [&] {
    out_arg(out, "model_predict");
    *out = arrays_list(model::predict(model_arg(m, "model_predict"),
                                      arrays_arg(x, num_x, "model_predict", "x"), batch_size,
                                      verbose));
  });
}

KB_API kb_status kb_model_predict_on_batch(kb_model* m, kb_tensor* const* x, size_t num_x,
                                           kb_tensor_list** out) {
  return guard("model_predict_on_batch", [&] {
    out_arg(out, "model_predict_on_batch");
    *out =
        arrays_list(model::predict_on_batch(model_arg(m, "model_predict_on_batch"),
                                            arrays_arg(x, num_x, "model_predict_on_batch", "x")));
  });
}

KB_API kb_status kb_model_reset_states(kb_model* m) {
  return guard("model_reset_states", [&] { model_arg(m, "model_reset_states").reset_states(); });
}

KB_API kb_status kb_model_summary(kb_model* m, const char** out) {
  return guard("model_summary", [&] {
    out_arg(out, "model_summary");
    m->summary = model::summary(model_arg(m, "model_summary"));
    *out = m->summary.c_str();
  });
}

KB_API kb_status kb_model_layer_count(kb_model* m, size_t* out) {
  return guard("model_layer_count", [&] {
    out_arg(out, "model_layer_count");
    *out = model_arg(m, "model_layer_count").layers().size();
  });
}

KB_API kb_status kb_model_count_params(kb_model* m, int64_t* out) {
  return guard("model_count_params", [&] {
    out_arg(out, "model_count_params");
    *out = model_arg(m, "model_count_params").count_params();
  });
}

KB_API kb_status kb_model_layer_name(kb_model* m, size_t index, const char** out) {
  return guard("model_layer_name", [&] {
    out_arg(out, "model_layer_name");
    m->layer_name = layer_arg(m, index, "model_layer_name")->name();
    *out = m->layer_name.c_str();
  });
}

KB_API kb_status kb_model_layer_class(kb_model* m, size_t index, const char** out) {
  return guard("model_layer_class", [&] {
    out_arg(out, "model_layer_class");
    m->layer_class = layer_arg(m, index, "model_layer_class")->class_name();
    *out = m->layer_class.c_str();
  });
}

KB_API kb_status kb_model_layer_config(kb_model* m, size_t index, const char** out) {
  return guard("model_layer_config", [&] {
    out_arg(out, "model_layer_config");
    m->layer_config = layer_arg(m, index, "model_layer_config")->config().dump();
    *out = m->layer_config.c_str();
  });
}

KB_API kb_status kb_model_layer_get_weights(kb_model* m, size_t index, kb_tensor_list** out) {
  return guard("model_layer_get_weights", [&] {
    out_arg(out, "model_layer_get_weights");
    std::vector<NodePtr> values;
    for (const auto& w : layer_arg(m, index, "model_layer_get_weights")->weights())
      values.push_back(constant_node(evaluate(w.variable)));
    *out = capi::wrap_list(std::move(values));
  });
}

KB_API kb_status kb_model_layer_set_weights(kb_model* m, size_t index, kb_tensor* const* values,
                                            size_t n) {
  return guard("model_layer_set_weights", [&] {
    const char* who = "model_layer_set_weights";
    layer_arg(m, index, who)->set_weights(arrays_arg(values, n, who, "values"));
  });
}

KB_API kb_status kb_model_inputs(kb_model* m, kb_tensor_list** out) {
  return guard("model_inputs", [&] {
    out_arg(out, "model_inputs");
    *out = capi::wrap_list(model_arg(m, "model_inputs").inputs());
  });
}

KB_API kb_status kb_model_outputs(kb_model* m, kb_tensor_list** out) {
  return guard("model_outputs", [&] {
    out_arg(out, "model_outputs");
    *out = capi::wrap_list(model_arg(m, "model_outputs").outputs());
  });
}

KB_API kb_status kb_model_weights(kb_model* m, kb_tensor_list** out) {
  return guard("model_weights", [&] {
    out_arg(out, "model_weights");
    std::vector<NodePtr> vars;
    for (const auto& w : model_arg(m, "model_weights").weights()) vars.push_back(w.variable);
    *out = capi::wrap_list(std::move(vars));
  });
}

KB_API kb_status kb_model_add_loss(kb_model* m, kb_tensor* term) {
  return guard("model_add_loss", [&] {
    model_arg(m, "model_add_loss").add_loss(capi::tensor_arg(term, "model_add_loss", "term"));
  });
}

KB_API kb_status kb_model_total_loss(kb_model* m, kb_tensor** out) {
  return guard("model_total_loss", [&] {
    out_arg(out, "model_total_loss");
    *out = capi::wrap(compiled(m, "model_total_loss").total_loss());
  });
}

KB_API kb_status kb_model_targets(kb_model* m, kb_tensor_list** out) {
  return guard("model_targets", [&] {
    out_arg(out, "model_targets");
    *out = capi::wrap_list(compiled(m, "model_targets").targets());
  });
}

KB_API kb_status kb_model_sample_weights(kb_model* m, kb_tensor_list** out) {
  return guard("model_sample_weights", [&] {
    out_arg(out, "model_sample_weights");
    *out = capi::wrap_list(compiled(m, "model_sample_weights").sample_weights());
  });
}

KB_API kb_status kb_model_updates(kb_model* m, kb_tensor_list** out) {
  return guard("model_updates", [&] {
    out_arg(out, "model_updates");
    *out = capi::wrap_list(compiled(m, "model_updates").training_updates());
  });
}

KB_API void kb_model_release(kb_model* m) { delete m; }

KB_API kb_status kb_model_register_layer(const char* class_name, kb_layer_function function,
                                         void* user_data) {
  return guard("model_register_layer", [&] {
    std::string cls = string_arg(class_name, "model_register_layer", "class_name");
    check(function != nullptr, Status::invalid_argument, "model_register_layer: function is NULL");
    model::register_custom_layer(cls, [function, user_data](model::CustomLayer& layer,
                                                            const model::Tensors& inputs) {
      constexpr size_t kCapacity = 16;
      std::vector<kb_tensor*> in;
      for (const auto& x : inputs) in.push_back(capi::wrap(x));
      kb_tensor* out[kCapacity] = {};
      size_t n = 0;
      kb_layer handle{&layer};
      std::string config = layer.config().dump();
      kb_status status =
          function(user_data, &handle, config.c_str(), in.data(), in.size(), out, kCapacity, &n);
      for (kb_tensor* t : in) kb_tensor_release(t);
      model::Tensors result;
      for (size_t i = 0; i < std::min(n, kCapacity); ++i)
        if (out[i]) result.push_back(out[i]->node);
      for (size_t i = 0; i < kCapacity; ++i) kb_tensor_release(out[i]);
      if (status != KB_OK) {
        bool known = status > KB_OK && status <= KB_ERROR_IO;
        fail(known ? static_cast<Status>(status) : Status::invalid_argument, layer.where(), ": ",
             kb_last_error_message());
      }
      check(n >= 1 && n <= kCapacity && result.size() == n, Status::invalid_argument, layer.where(),
            ": its function gave ", n, " outputs (1 to ", kCapacity, ", none NULL)");
      return result;
    });
  });
}

KB_API kb_status kb_model_layer_weight(kb_layer* layer, const char* name, const int64_t* shape,
                                       size_t ndim, const char* initializer_json, int32_t trainable,
                                       kb_tensor** out) {
  return guard("model_layer_weight", [&] {
    const char* who = "model_layer_weight";
    out_arg(out, who);
    check(layer != nullptr && layer->layer != nullptr, Status::invalid_argument, who,
          ": layer is NULL (only valid while the layer's function runs)");
    std::string init = string_arg(initializer_json, who, "initializer_json");
    model::Json spec = !init.empty() && (init[0] == '{' || init[0] == '"')
                           ? model::parse_json(init, std::string(who) + ": initializer_json")
                           : model::Json(init);
    *out = capi::wrap(layer->layer->weight(string_arg(name, who, "name"),
                                           capi::dims_arg(shape, ndim, who, "shape"), spec,
                                           trainable != 0));
  });
}

}  // extern "C"

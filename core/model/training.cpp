#include "core/model/training.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>

#include "core/graph/session.h"
#include "core/model/graph_math.h"
#include "core/model/losses.h"
#include "core/model/progress.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

std::shared_ptr<Buffer> scalar_bool(bool v) {
  auto b = Buffer::make(DType::b8, {});
  *b->as<uint8_t>() = v ? 1 : 0;
  return b;
}

double scalar_of(const Buffer& b) {
  check(b.numel() == 1, Status::internal, "a loss or metric is not a scalar");
  switch (b.dtype) {
    case DType::f64:
      return *b.as<double>();
    case DType::f32:
      return double(*b.as<float>());
    default:
      fail(Status::internal, "a loss or metric of dtype ", dtype_name(b.dtype));
  }
}

// The number of samples all of `arrays` hold (their first dims, which must agree).
int64_t samples_of(const std::vector<const Buffers*>& arrays, const char* who) {
  int64_t n = -1;
  for (const Buffers* list : arrays)
    for (const auto& b : *list) {
      check(b != nullptr && !b->dims.empty(), Status::shape, who,
            ": an input or target is a scalar (arrays hold one sample per row)");
      check(n < 0 || b->dims[0] == n, Status::shape, who, ": arrays of ", n, " and ", b->dims[0],
            " samples");
      n = b->dims[0];
    }
  return std::max<int64_t>(n, 0);
}

std::shared_ptr<Buffer> gather_rows(const std::shared_ptr<Buffer>& b,
                                    const std::vector<int64_t>& index, size_t from, size_t to) {
  Dims d = b->dims;
  d[0] = int64_t(to - from);
  auto out = Buffer::make(b->dtype, d);
  size_t row = b->nbytes() / size_t(std::max<int64_t>(b->dims[0], 1));
  for (size_t i = from; i < to; ++i)
    std::memcpy(static_cast<char*>(out->data()) + (i - from) * row,
                static_cast<const char*>(b->data()) + size_t(index[i]) * row, row);
  return out;
}

Buffers batch_of(const Buffers& arrays, const std::vector<int64_t>* index, int64_t start,
                 int64_t end) {
  Buffers out;
  for (const auto& b : arrays)
    out.push_back(index ? gather_rows(b, *index, size_t(start), size_t(end))
                        : rows_of(b, start, end));
  return out;
}

// Keras' per-sample weights: ones, or each sample's class weight (the argmax of a one-hot row,
// or a sparse label).
std::shared_ptr<Buffer> sample_weights_of(const Buffer* y, int64_t n,
                                          const std::map<int64_t, double>& class_weight) {
  auto w = Buffer::make(DType::f32, {n});
  float* p = w->as<float>();
  std::fill(p, p + n, 1.0f);
  if (class_weight.empty() || y == nullptr) return w;
  auto y32 = convert_buffer(std::make_shared<Buffer>(*y), DType::f32);
  int64_t width = n > 0 ? y32->numel() / n : 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = y32->as<float>() + i * width;
    int64_t cls = width == 1 ? int64_t(row[0]) : int64_t(std::max_element(row, row + width) - row);
    auto it = class_weight.find(cls);
    p[i] = it == class_weight.end() ? 1.0f : float(it->second);
  }
  return w;
}

struct Averages {
  std::vector<double> sums;
  int64_t seen = 0;
  void add(const std::vector<double>& values, int64_t n) {
    if (sums.empty()) sums.assign(values.size(), 0);
    for (size_t i = 0; i < values.size(); ++i) sums[i] += values[i] * double(n);
    seen += n;
  }
  std::vector<double> mean() const {
    std::vector<double> out;
    for (double s : sums) out.push_back(seen > 0 ? s / double(seen) : 0);
    return out;
  }
};

std::vector<std::pair<std::string, double>> labelled(const std::vector<std::string>& names,
                                                     const std::vector<double>& values,
                                                     const std::string& prefix = "") {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    out.emplace_back(prefix + names[i], values[i]);
  return out;
}

}  // namespace

FitOptions fit_options_from_json(const Json& o, const std::string& w) {
  FitOptions f;
  f.shuffle = bool_or(o, "shuffle", true, w);
  f.seed = uint64_t(int_or(o, "seed", 0, w));
  f.validation_split = number_or(o, "validation_split", 0, w);
  f.initial_epoch = int_or(o, "initial_epoch", 0, w);
  if (o.contains("class_weight") && !o["class_weight"].is_null()) {  // null: none
    check(o["class_weight"].is_object(), Status::invalid_argument, w,
          ": class_weight is not {class: weight}");
    for (const auto& [k, v] : o["class_weight"].items()) {
      check(v.is_number(), Status::invalid_argument, w, ": class weight of ", k,
            " is not a number");
      char* end = nullptr;
      long long cls = std::strtoll(k.c_str(), &end, 10);
      check(!k.empty() && end && *end == '\0', Status::invalid_argument, w, ": class '", k,
            "' is not an integer");
      f.class_weight[cls] = v.get<double>();
    }
  }
  if (o.contains("callbacks")) f.callbacks = make_callbacks(o["callbacks"], w);
  return f;
}

std::shared_ptr<Buffer> rows_of(const std::shared_ptr<Buffer>& b, int64_t start, int64_t end) {
  check(!b->dims.empty() && start >= 0 && start <= end && end <= b->dims[0], Status::internal,
        "rows_of: rows out of range");
  auto out = std::make_shared<Buffer>(b->dtype, b->dims);
  out->dims[0] = end - start;
  size_t row = b->dims[0] > 0 ? b->nbytes() / size_t(b->dims[0]) : 0;
  out->storage =
      std::shared_ptr<void>(b->storage, static_cast<char*>(b->data()) + size_t(start) * row);
  out->device = b->device;
  return out;
}

// The shape Keras checks a target against (_standardize_user_data): the output's, but a class
// index in place of the class axis for sparse_categorical_crossentropy (of logits too).
static Shape target_shape(const Shape& output, const std::string& loss) {
  bool sparse = without_logits(loss) == "sparse_categorical_crossentropy";
  if (!sparse || !output.rank_known || output.dims.empty()) return output;
  Dims d = output.dims;
  bool first = Session::get().image_data_format() == DataFormat::channels_first;
  if (first && (d.size() == 4 || d.size() == 5))
    d[1] = 1;
  else
    d.back() = 1;
  return Shape(d);
}

Training::Training(Model& model, const Json& optimizer, const Json& overrides,
                   const std::vector<std::string>& losses, const std::vector<std::string>& metrics,
                   const std::vector<double>& loss_weights)
    : model_(model),
      optimizer_(Optimizer::make(optimizer, overrides, model.rules())),
      metrics_(metrics) {
  const Tensors& outs = model.outputs();
  size_t n = outs.size();
  check(losses.size() == 1 || losses.size() == n, Status::invalid_argument,
        "compile: ", losses.size(), " losses for a model of ", n, " outputs");
  losses_ = losses.size() == n ? losses : std::vector<std::string>(n, losses[0]);
  check(loss_weights.empty() || loss_weights.size() == n, Status::invalid_argument,
        "compile: ", loss_weights.size(), " loss weights for a model of ", n, " outputs");
  loss_weights_ = loss_weights.empty() ? std::vector<double>(n, 1.0) : loss_weights;
  phase_ = model.phase();
  DType fx = Session::get().floatx();
  auto mask_of = [&](size_t i) {
    return i < model.output_masks().size() ? model.output_masks()[i] : nullptr;
  };
  // weighted_masked_objective: a masked output's scores times the mask, over the mask's mean.
  auto masked = [&](NodePtr score, const NodePtr& mask) {
    if (!mask) return score;
    NodePtr m = api::cast(mask, fx);
    score = times(score, m);
    return divided(score, api::mean(m, std::nullopt, false));
  };
  NodePtr total;
  Tensors extra;  // per-output losses (several outputs), then metrics
  names_ = {"loss"};
  std::vector<std::string> metric_names;
  for (size_t i = 0; i < n; ++i) {
    const NodePtr& out = outs[i];
    const std::string& oname = model.output_names()[i];
    std::string where = "compile: output '" + oname + "'";
    NamedScore loss = loss_by_name(losses_[i], where);
    target_shapes_.push_back(target_shape(out->shape(), loss.name));
    targets_.push_back(api::placeholder(Shape(Dims(size_t(std::max<int64_t>(out->rank(), 0)), -1)),
                                        out->dtype(), oname + "_target"));
    sample_weights_.push_back(api::placeholder(Shape(Dims{-1}), fx, oname + "_sample_weights"));
    // keras.engine.training_utils.weighted_masked_objective, weights of rank 1: the score
    // times the weights, over the mean of the weights that are not 0, averaged.
    NodePtr score = masked(loss.fn(targets_[i], out), mask_of(i));
    if (score->rank() > 1) {  // reduced to the weights' rank first
      std::vector<int64_t> axes;
      for (int64_t a = 1; a < score->rank(); ++a) axes.push_back(a);
      score = api::mean(score, axes, false);
    }
    const NodePtr& w = sample_weights_[i];
    score = times(score, w);
    score = divided(
        score,
        api::mean(api::cast(api::binary_op("not_equal", ops::NotEqual, w, number(w, 0.0)), fx),
                  std::nullopt, false));
    NodePtr output_loss = api::mean(score, std::nullopt, false);
    if (n > 1) {
      extra.push_back(output_loss);
      names_.push_back(oname + "_loss");
    }
    NodePtr weighted = times(number(output_loss, loss_weights_[i]), output_loss);
    total = total ? plus(total, weighted) : weighted;
  }
  for (const NodePtr& term : model.losses()) total = plus(total, term);
  for (size_t i = 0; i < n; ++i)
    for (const auto& m : metrics_) {
      const NodePtr& out = outs[i];
      int64_t last = out->rank() > 0 ? out->shape().dims.back() : -1;
      NamedScore metric = metric_by_name(m, losses_[i], last,
                                         "compile: metric of '" + model.output_names()[i] + "'");
      // Keras 2.2.4 logs "accuracy" as "acc"; Keras 3 and tf.keras keep the name given.
      if (model.rules() != KerasRules::keras2) metric.name = m;
      extra.push_back(
          api::mean(masked(metric.fn(targets_[i], out), mask_of(i)), std::nullopt, false));
      names_.push_back((n > 1 ? model.output_names()[i] + "_" : std::string()) + metric.name);
    }
  Tensors ins = model.inputs();
  ins.insert(ins.end(), targets_.begin(), targets_.end());
  ins.insert(ins.end(), sample_weights_.begin(), sample_weights_.end());
  if (phase_) ins.push_back(phase_);
  Tensors results{total};
  results.insert(results.end(), extra.begin(), extra.end());
  // Keras 2.2.4: the model's updates (BatchNormalization's moving averages), then the optimizer's.
  Tensors updates = model.updates();
  for (const auto& u : optimizer_->updates(total, model.trainable_variables(), model.constraints()))
    updates.push_back(u);
  total_ = total;
  updates_ = updates;
  train_ = std::make_unique<Function>(ins, results, updates);
  test_ = std::make_unique<Function>(ins, results, model.state_updates());
  // The loops read results and slice batches in host memory: models run on the CPU for now.
  train_->set_device(Device::cpu);
  // A layer that cannot be trained through fails the first training step, not the compile: a
  // model with it still predicts and evaluates.
  std::function<void(const Model&)> refusals = [&](const Model& m) {
    for (const auto& l : m.layers()) {
      if (const Model* nested = l->nested_model()) refusals(*nested);
      std::string why = l->training_refusal();
      if (refusal_.empty() && !why.empty()) refusal_ = l->where() + ": " + why;
    }
  };
  refusals(model);
  test_->set_device(Device::cpu);
}

Json Training::config() const {
  Json loss = Json::array();
  for (const auto& l : losses_) loss.push_back(loss_config(l));
  if (losses_.size() == 1) loss = loss[0];
  return Json{{"optimizer_config", optimizer_->config()},
              {"loss", loss},
              {"metrics", metrics_},
              {"sample_weight_mode", nullptr},
              {"loss_weights", loss_weights_.empty() ? Json(nullptr) : Json(loss_weights_)}};
}

Buffers Training::target_arrays(const Buffers& y) const {
  // Keras' standardize_input_data: a 1-D target becomes a column.
  Buffers out;
  for (const auto& b : y) {
    if (b && b->dims.size() == 1) {
      auto c = std::make_shared<Buffer>(*b);
      c->dims = {b->dims[0], 1};
      out.push_back(c);
    } else {
      out.push_back(b);
    }
  }
  return out;
}

Buffers Training::feed(const Buffers& x, const Buffers& y, const Buffers& sample_weights,
                       bool training) {
  Buffers ins = x;
  ins.insert(ins.end(), y.begin(), y.end());
  ins.insert(ins.end(), sample_weights.begin(), sample_weights.end());
  if (phase_) ins.push_back(scalar_bool(training));
  return ins;
}

std::vector<double> Training::run(Function& f, const Buffers& ins) {
  std::vector<double> out;
  for (const auto& b : f.call(ins)) out.push_back(scalar_of(*b));
  return out;
}

// A shape as Keras prints it: (None, 10), (3,).
static std::string tuple_of(const Dims& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + (dims[i] < 0 ? std::string("None") : std::to_string(dims[i]));
  return s + (dims.size() == 1 ? ",)" : ")");
}

// Keras' standardize_input_data: each array's rank, and its dims after the batch axis, against
// the shape it feeds (an unknown rank or dim takes anything), failing as Keras does, before any
// step runs, with the layer's name.
static void check_shapes(const Buffers& arrays, const std::vector<Shape>& shapes,
                         const std::vector<std::string>& names, const char* who, const char* kind) {
  for (size_t i = 0; i < arrays.size() && i < shapes.size(); ++i) {
    const Shape& want = shapes[i];
    if (!arrays[i] || !want.rank_known) continue;
    const Dims& got = arrays[i]->dims;
    std::string name = i < names.size() ? "'" + names[i] + "'" : kind + std::to_string(i);
    check(got.size() == want.dims.size(), Status::shape, who, ": error when checking ", kind,
          ": expected ", name, " to have ", want.dims.size(), " dimensions ", tuple_of(want.dims),
          ", but got an array of shape ", tuple_of(got));
    for (size_t d = 1; d < got.size(); ++d)
      check(want.dims[d] < 0 || want.dims[d] == got[d], Status::shape, who,
            ": error when checking ", kind, ": expected ", name, " to have shape ",
            tuple_of(want.dims), " but got an array of shape ", tuple_of(got));
  }
}

static std::vector<Shape> shapes_of(const Tensors& tensors) {
  std::vector<Shape> out;
  for (const auto& t : tensors) out.push_back(t->shape());
  return out;
}

static void check_inputs(const Model& m, const Buffers& x, const char* who) {
  check(x.size() == m.inputs().size(), Status::invalid_argument, who, ": ", x.size(),
        " input arrays for a model of ", m.inputs().size(), " inputs");
  check_shapes(x, shapes_of(m.inputs()), m.input_names(), who, "input");
}

Buffers Training::checked_targets(const Buffers& x, const Buffers& y, const char* who) const {
  check_inputs(model_, x, who);
  check(y.size() == model_.outputs().size(), Status::invalid_argument, who, ": ", y.size(),
        " target arrays for a model of ", model_.outputs().size(), " outputs");
  Buffers out = target_arrays(y);
  check_shapes(out, target_shapes_, model_.output_names(), who, "target");
  return out;
}

std::vector<double> Training::on_batch(Function& f, const Buffers& x, const Buffers& y0,
                                       bool training, const char* who) {
  Buffers y = checked_targets(x, y0, who);
  int64_t n = samples_of({&x, &y}, who);
  Buffers w;
  for (size_t i = 0; i < y.size(); ++i) w.push_back(sample_weights_of(nullptr, n, {}));
  return run(f, feed(x, y, w, training));
}

Function& Training::train_function(const char* who) {
  check(refusal_.empty(), Status::not_implemented, who, ": ", refusal_);
  return *train_;
}

std::vector<double> Training::train_on_batch(const Buffers& x, const Buffers& y) {
  return on_batch(train_function("train_on_batch"), x, y, true, "train_on_batch");
}

std::vector<double> Training::test_on_batch(const Buffers& x, const Buffers& y) {
  return on_batch(*test_, x, y, false, "test_on_batch");
}

// Per-sample weights given by the caller: one float vector of n per output.
Buffers Training::given_weights(const Buffers& w, int64_t n, const char* who) const {
  if (w.empty()) return {};
  check(w.size() == model_.outputs().size(), Status::invalid_argument, who, ": ", w.size(),
        " sample weight vectors for a model of ", model_.outputs().size(), " outputs");
  Buffers out;
  for (const auto& b : w) {
    check(b != nullptr && b->dims.size() == 1 && b->dims[0] == n, Status::shape, who,
          ": sample weights must be a vector of one weight per sample (", n, ")");
    out.push_back(convert_buffer(b, Session::get().floatx()));
  }
  return out;
}

std::vector<double> Training::evaluate(const Buffers& x, const Buffers& y0, int64_t batch_size,
                                       int verbose, const Buffers& sample_weight) {
  Buffers y = checked_targets(x, y0, "evaluate");
  check(batch_size > 0, Status::invalid_argument, "evaluate: batch_size must be positive");
  int64_t n = samples_of({&x, &y}, "evaluate");
  Buffers sw = given_weights(sample_weight, n, "evaluate");
  Averages avg;
  Progress bar(n, verbose == 1 ? 1 : 0);
  for (int64_t start = 0; start < n; start += batch_size) {
    int64_t end = std::min(n, start + batch_size);
    Buffers w = batch_of(sw, nullptr, start, end);
    if (w.empty())
      for (size_t i = 0; i < y.size(); ++i)
        w.push_back(sample_weights_of(nullptr, end - start, {}));
    avg.add(run(*test_,
                feed(batch_of(x, nullptr, start, end), batch_of(y, nullptr, start, end), w, false)),
            end - start);
    bar.update(end, {});
  }
  return avg.mean();
}

Json Training::fit(const Buffers& x0, const Buffers& y0, const FitOptions& o,
                   const FitCallback& callback) {
  Buffers y0t = checked_targets(x0, y0, "fit");
  Function& step = train_function("fit");
  check(o.batch_size > 0, Status::invalid_argument, "fit: batch_size must be positive");
  check(o.epochs >= 0 && o.initial_epoch >= 0, Status::invalid_argument,
        "fit: epochs and initial_epoch must be >= 0");
  check(o.validation_split >= 0 && o.validation_split < 1, Status::invalid_argument,
        "fit: validation_split must be in [0, 1)");
  int64_t total = samples_of({&x0, &y0t}, "fit");
  Buffers sw0 = given_weights(o.sample_weight, total, "fit");
  bool given_validation = !o.validation_x.empty() || !o.validation_y.empty();
  if (given_validation) checked_targets(o.validation_x, o.validation_y, "fit: validation");
  // Keras takes the validation rows off the end, before any shuffling.
  int64_t split = o.validation_split > 0 && !given_validation
                      ? int64_t(double(total) * (1.0 - o.validation_split))
                      : total;
  check(split > 0 || total == 0, Status::invalid_argument,
        "fit: validation_split leaves no samples to train on");
  Buffers x = batch_of(x0, nullptr, 0, split), y = batch_of(y0t, nullptr, 0, split);
  Buffers vx = batch_of(x0, nullptr, split, total), vy = batch_of(y0t, nullptr, split, total);
  Buffers sw = batch_of(sw0, nullptr, 0, split), vsw = batch_of(sw0, nullptr, split, total);
  if (given_validation) {
    vx = o.validation_x;
    vy = o.validation_y;
    vsw = o.validation_sample_weight;
  }
  bool validate = given_validation || split < total;
  int64_t n = split;
  Json history = Json::object();
  for (const auto& name : names_) history[name] = Json::array();
  if (validate)
    for (const auto& name : names_) history["val_" + name] = Json::array();
  std::vector<int64_t> index(size_t(n), 0);
  std::iota(index.begin(), index.end(), 0);
  std::mt19937_64 rng(o.seed);
  FitContext context{model_, *this, o.epochs, o.initial_epoch};
  for (const auto& c : o.callbacks) c->on_train_begin(context);
  check(context.initial_epoch >= 0, Status::invalid_argument, "fit: a negative initial epoch");
  // Each epoch's shuffle is the seed's sequence at that epoch, whichever epoch fit starts at: a
  // resumed fit sees the samples in the order an uninterrupted one does.
  for (int64_t e = 0; o.shuffle && e < std::min(context.initial_epoch, o.epochs); ++e)
    std::shuffle(index.begin(), index.end(), rng);
  for (int64_t epoch = context.initial_epoch; epoch < o.epochs; ++epoch) {
    if (o.verbose)
      std::fprintf(stderr, "Epoch %lld/%lld\n", (long long)epoch + 1, (long long)o.epochs);
    for (const auto& c : o.callbacks) c->on_epoch_begin(context, epoch);
    if (o.shuffle) std::shuffle(index.begin(), index.end(), rng);
    Averages avg;
    Progress bar(n, o.verbose);
    bool stop = false;
    for (int64_t start = 0, batch = 0; start < n; start += o.batch_size, ++batch) {
      int64_t end = std::min(n, start + o.batch_size);
      Buffers bx = batch_of(x, o.shuffle ? &index : nullptr, start, end);
      Buffers by = batch_of(y, o.shuffle ? &index : nullptr, start, end);
      Buffers w = batch_of(sw, o.shuffle ? &index : nullptr, start, end);
      if (w.empty())
        for (const auto& t : by)
          w.push_back(sample_weights_of(t.get(), end - start, o.class_weight));
      for (const auto& c : o.callbacks) c->on_train_batch_begin(context, epoch, batch);
      std::vector<double> outs = run(step, feed(bx, by, w, true));
      avg.add(outs, end - start);
      bar.update(end, labelled(names_, avg.mean()));
      if (!o.callbacks.empty()) {  // Keras 3's batch logs: the epoch's running means
        Json logs = Json::object();
        for (const auto& [name, v] : labelled(names_, avg.mean())) logs[name] = v;
        for (const auto& c : o.callbacks) c->on_train_batch_end(context, epoch, batch, logs);
      }
      if (callback) {
        Json logs{{"batch", batch}, {"size", end - start}};
        for (size_t i = 0; i < names_.size(); ++i) logs[names_[i]] = outs[i];
        stop = callback(epoch, batch, logs) || stop;
      }
      if (stop || context.stop_training) break;
    }
    std::vector<double> means = avg.mean();
    auto shown = labelled(names_, means);
    Json logs = Json::object();
    for (size_t i = 0; i < names_.size() && i < means.size(); ++i) logs[names_[i]] = means[i];
    if (validate) {
      std::vector<double> val = evaluate(vx, vy, o.batch_size, 0, vsw);
      for (size_t i = 0; i < names_.size(); ++i) logs["val_" + names_[i]] = val[i];
      for (auto& p : labelled(names_, val, "val_")) shown.push_back(p);
    }
    for (const auto& c : o.callbacks) c->on_epoch_end(context, epoch, logs);
    if (callback) stop = callback(epoch, -1, logs) || stop;
    // The history and the progress bar come last, with what the callbacks added
    // (learning_rate), as Keras 3 appends them to the callbacks.
    for (auto it = logs.begin(); it != logs.end(); ++it) {
      if (!history.contains(it.key())) history[it.key()] = Json::array();
      history[it.key()].push_back(it.value());
      bool listed = std::any_of(shown.begin(), shown.end(),
                                [&](const auto& p) { return p.first == it.key(); });
      if (!listed && it.value().is_number()) shown.emplace_back(it.key(), it.value().get<double>());
    }
    bar.finish(shown);
    if (stop || context.stop_training) break;
  }
  for (const auto& c : o.callbacks) c->on_train_end(context);
  // Keras 3's fit ends with the optimizer's finalize_variable_values (use_ema's averages).
  if (o.epochs > 0) optimizer_->finalize();
  return history;
}

// The outputs for x, its arrays already checked against the model's inputs.
static Buffers run_predict(Model& model, const Buffers& x) {
  Buffers ins = x;
  if (model.phase()) ins.push_back(scalar_bool(false));
  return model.predict_function().call(ins);
}

Buffers predict_on_batch(Model& model, const Buffers& x) {
  check_inputs(model, x, "predict");
  return run_predict(model, x);
}

Buffers predict(Model& model, const Buffers& x, int64_t batch_size, int verbose) {
  check(batch_size > 0, Status::invalid_argument, "predict: batch_size must be positive");
  check_inputs(model, x, "predict");
  int64_t n = samples_of({&x}, "predict");
  Buffers out;
  Progress bar(n, verbose == 1 ? 1 : 0);
  for (int64_t start = 0; start < n; start += batch_size) {
    int64_t end = std::min(n, start + batch_size);
    Buffers part = run_predict(model, batch_of(x, nullptr, start, end));
    if (out.empty())
      for (const auto& p : part) {
        check(!p->dims.empty() && p->dims[0] == end - start, Status::shape,
              "predict: an output without one row per sample");
        Dims d = p->dims;
        d[0] = n;
        out.push_back(Buffer::make(p->dtype, d));
      }
    for (size_t k = 0; k < part.size(); ++k) {
      size_t row = part[k]->nbytes() / size_t(end - start);
      check(part[k]->dtype == out[k]->dtype && row * size_t(n) == out[k]->nbytes(), Status::shape,
            "predict: batches give outputs of different shapes");
      std::memcpy(static_cast<char*>(out[k]->data()) + size_t(start) * row, part[k]->data(),
                  part[k]->nbytes());
    }
    bar.update(end, {});
  }
  if (n == 0) return run_predict(model, x);
  return out;
}

}  // namespace kb::model

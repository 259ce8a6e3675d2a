#include "core/model/training.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>

#include "core/api/distributed.h"
#include "core/backend/collectives.h"
#include "core/graph/session.h"
#include "core/model/graph_math.h"
#include "core/model/losses.h"
#include "core/model/progress.h"
#include "core/ops/build.h"
#include "core/ops/collective_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"
#include "core/util/fingerprint.h"

namespace kb::model {
namespace {

std::shared_ptr<Buffer> scalar_bool(bool v) {
  auto b = Buffer::make(DType::b8, {});
  *b->as<uint8_t>() = v ? 1 : 0;
  return b;
}

std::shared_ptr<Buffer> floatx_scalar(double v) {
  auto b = Buffer::make(DType::f64, {});
  *b->as<double>() = v;
  return convert_buffer(b, Session::get().floatx());
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

// This process' rows of [start, end) in data-parallel training: a contiguous share, the shares'
// sizes differing by one at most.
std::pair<int64_t, int64_t> share_of(int64_t start, int64_t end) {
  int64_t m = end - start, r = dist::rank(), p = dist::size();
  return {start + m * r / p, start + m * (r + 1) / p};
}

// The sums of `values` over the processes (float64), in place.
void sum_across_processes(std::vector<double>& values) {
  if (values.empty()) return;
  api::all_reduce_values(values.data(), values.data(), values.size(), DType::f64,
                         api::ReduceOp::sum);
}

// Whether any process says stop (a program's callback may decide on one process alone): every
// process must leave the loop at the same step.
bool any_process(bool flag) {
  std::vector<double> v{flag ? 1.0 : 0.0};
  sum_across_processes(v);
  return v[0] > 0;
}

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
  f.distributed = bool_or(o, "distributed", false, w);
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
    : model_(model), metrics_(metrics) {
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
  // Keras 3's losses and metrics convert 16-bit outputs (a mixed_bfloat16 model's) and their
  // targets to float32, as 16-bit terms (the layers' activity regularizers) are summed.
  auto widened = [&](const NodePtr& x) {
    return is_narrow_float(x->dtype()) ? api::cast(x, fx) : x;
  };
  Tensors scored;
  for (const auto& out : outs) scored.push_back(widened(out));
  NodePtr total;
  Tensors extra;  // per-output losses (several outputs), then metrics
  names_ = {"loss"};
  std::vector<std::string> metric_names;
  for (size_t i = 0; i < n; ++i) {
    const NodePtr& out = scored[i];
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
  for (const NodePtr& term : model.losses()) total = plus(total, widened(term));
  for (size_t i = 0; i < n; ++i)
    for (const auto& m : metrics_) {
      const NodePtr& out = scored[i];
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
  total_ = total;
  step_inputs_ = ins;
  results_ = results;
  optimizer_spec_ = optimizer;
  optimizer_overrides_ = overrides;
  build_step(false);
  test_ = std::make_unique<Function>(ins, results, model.state_updates());
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

// A layer's update in data-parallel training: the value it assigns averaged over the processes,
// as Keras' MirroredStrategy aggregates BatchNormalization's moving statistics (their mean), so
// that every process keeps the same. (An average, which is affine, of the zero-debiased form's
// new value is the average's own.) A stateful layer's states stay the process'.
static NodePtr averaged_across_processes(const NodePtr& u, const Tensors& states) {
  bool state = std::find(states.begin(), states.end(), u) != states.end();
  if (state || !u->is(ops::Assign) || u->inputs.size() < 2 ||
      !summable_across_processes(u->inputs[1]->dtype()))
    return u;
  std::vector<NodePtr> ins = u->inputs;
  ins[1] = api::all_reduce(ins[1], api::ReduceOp::average);
  return make_node(*u->op, ins, u->attrs, u->name);
}

void Training::build_step(bool distributed) {
  std::unique_ptr<Optimizer> before = std::move(optimizer_);
  optimizer_ = Optimizer::make(optimizer_spec_, optimizer_overrides_, model_.rules());
  Tensors ins = step_inputs_;
  Optimizer::GradientTransform reduce;
  // Keras 2.2.4: the model's updates (BatchNormalization's moving averages), then the optimizer's.
  Tensors updates = model_.updates();
  if (distributed) {
    // Each process' gradient is of its rows' mean loss: weighed by its share of the global
    // batch and summed, it is the gradient of the global batch's mean loss, before clipping.
    NodePtr share = api::placeholder(Shape(Dims{}), Session::get().floatx(), "batch_share");
    ins.push_back(share);
    reduce = [share](const NodePtr& g) {
      check_summable_across_processes(g->dtype(), "fit: distributed: a gradient");
      return api::all_reduce(times(g, api::cast(share, g->dtype())), api::ReduceOp::sum);
    };
    Tensors states = model_.state_updates();
    for (auto& u : updates) u = averaged_across_processes(u, states);
  }
  for (const auto& u :
       optimizer_->updates(total_, model_.trainable_variables(), model_.constraints(), reduce))
    updates.push_back(u);
  if (before) optimizer_->take_state_of(*before);
  updates_ = updates;
  train_ = std::make_unique<Function>(ins, results_, updates);
  // The loops read results and slice batches in host memory: models run on the CPU for now.
  train_->set_device(Device::cpu);
  distributed_ = distributed;
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

Function& Training::train_function(const char* who, bool distributed) {
  check(refusal_.empty(), Status::not_implemented, who, ": ", refusal_);
  if (distributed != distributed_) build_step(distributed);
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

std::vector<double> Training::evaluate_sums(const Buffers& x, const Buffers& y, int64_t batch_size,
                                            int verbose, const Buffers& sample_weight, bool shard,
                                            int64_t* seen) {
  int64_t n = samples_of({&x, &y}, "evaluate");
  Buffers sw = given_weights(sample_weight, n, "evaluate");
  auto [first, last] = shard ? share_of(0, n) : std::pair<int64_t, int64_t>(0, n);
  Averages avg;
  Progress bar(last - first, verbose == 1 ? 1 : 0);
  for (int64_t start = first; start < last; start += batch_size) {
    int64_t end = std::min(last, start + batch_size);
    Buffers w = batch_of(sw, nullptr, start, end);
    if (w.empty())
      for (size_t i = 0; i < y.size(); ++i)
        w.push_back(sample_weights_of(nullptr, end - start, {}));
    avg.add(run(*test_,
                feed(batch_of(x, nullptr, start, end), batch_of(y, nullptr, start, end), w, false)),
            end - start);
    bar.update(end - first, {});
  }
  if (avg.sums.empty()) avg.sums.assign(names_.size(), 0);
  *seen = avg.seen;
  return avg.sums;
}

std::vector<double> Training::evaluate(const Buffers& x, const Buffers& y0, int64_t batch_size,
                                       int verbose, const Buffers& sample_weight) {
  Buffers y = checked_targets(x, y0, "evaluate");
  check(batch_size > 0, Status::invalid_argument, "evaluate: batch_size must be positive");
  int64_t seen = 0;
  std::vector<double> sums = evaluate_sums(x, y, batch_size, verbose, sample_weight, false, &seen);
  for (double& v : sums) v = seen > 0 ? v / double(seen) : 0;
  return sums;
}

Json Training::fit(const Buffers& x0, const Buffers& y0, const FitOptions& o,
                   const FitCallback& callback) {
  Buffers y0t = checked_targets(x0, y0, "fit");
  check(o.batch_size > 0, Status::invalid_argument, "fit: batch_size must be positive");
  check(o.epochs >= 0 && o.initial_epoch >= 0, Status::invalid_argument,
        "fit: epochs and initial_epoch must be >= 0");
  check(o.validation_split >= 0 && o.validation_split < 1, Status::invalid_argument,
        "fit: validation_split must be in [0, 1)");
  bool shared = o.distributed && dist::size() > 1;  // one model across the processes
  Function& step = train_function("fit", o.distributed);
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
  // A step takes batch_size rows on each process: the global batch is their number times that.
  int64_t global_batch =
      checked_mul(o.batch_size, int64_t(shared ? dist::size() : 1), "fit: batch_size too large");
  int verbose = shared && dist::rank() != 0 ? 0 : o.verbose;
  // Files (checkpoints, logs, backups) are written by rank 0 alone.
  Callbacks callbacks;
  for (const auto& c : o.callbacks)
    if (!shared || dist::rank() == 0 || !c->writes_files()) callbacks.push_back(c);
  Json history = Json::object();
  for (const auto& name : names_) history[name] = Json::array();
  if (validate)
    for (const auto& name : names_) history["val_" + name] = Json::array();
  std::vector<int64_t> index(size_t(n), 0);
  std::iota(index.begin(), index.end(), 0);
  std::mt19937_64 rng(o.seed);
  FitContext context{model_, *this, o.epochs, o.initial_epoch};
  for (const auto& c : callbacks) c->on_train_begin(context);
  check(context.initial_epoch >= 0, Status::invalid_argument, "fit: a negative initial epoch");
  if (shared) start_together(context, o, n, vx.empty() ? 0 : vx[0]->dims[0]);
  // Each epoch's shuffle is the seed's sequence at that epoch, whichever epoch fit starts at: a
  // resumed fit sees the samples in the order an uninterrupted one does.
  for (int64_t e = 0; o.shuffle && e < std::min(context.initial_epoch, o.epochs); ++e)
    std::shuffle(index.begin(), index.end(), rng);
  // A stop one process may decide (its callback; the same list on every process, rank 0's files
  // aside): every process must then ask alike.
  bool consult = shared && (callback || !o.callbacks.empty());
  for (int64_t epoch = context.initial_epoch; epoch < o.epochs; ++epoch) {
    if (verbose)
      std::fprintf(stderr, "Epoch %lld/%lld\n", (long long)epoch + 1, (long long)o.epochs);
    for (const auto& c : callbacks) c->on_epoch_begin(context, epoch);
    if (o.shuffle) std::shuffle(index.begin(), index.end(), rng);
    Averages avg;
    Progress bar(n, verbose);
    bool stop = false;
    for (int64_t start = 0, batch = 0; start < n; start += global_batch, ++batch) {
      int64_t end = std::min(n, start + global_batch);
      auto [from, to] = shared ? share_of(start, end) : std::pair<int64_t, int64_t>(start, end);
      // A process without rows in a short last batch computes on one, weighed 0.
      int64_t rows = to - from, fed_to = rows > 0 ? to : from + 1;
      const std::vector<int64_t>* order = o.shuffle ? &index : nullptr;
      Buffers bx = batch_of(x, order, from, fed_to), by = batch_of(y, order, from, fed_to);
      Buffers w = batch_of(sw, order, from, fed_to);
      if (w.empty())
        for (const auto& t : by)
          w.push_back(sample_weights_of(t.get(), fed_to - from, o.class_weight));
      for (const auto& c : callbacks) c->on_train_batch_begin(context, epoch, batch);
      Buffers fed = feed(bx, by, w, true);
      if (distributed_) fed.push_back(floatx_scalar(double(rows) / double(end - start)));
      std::vector<double> outs = run(step, fed);
      if (shared) {  // the global batch's means: each process' weighed by its rows
        for (double& v : outs) v *= double(rows) / double(end - start);
        sum_across_processes(outs);
      }
      avg.add(outs, end - start);
      bar.update(end, labelled(names_, avg.mean()));
      if (!callbacks.empty()) {  // Keras 3's batch logs: the epoch's running means
        Json logs = Json::object();
        for (const auto& [name, v] : labelled(names_, avg.mean())) logs[name] = v;
        for (const auto& c : callbacks) c->on_train_batch_end(context, epoch, batch, logs);
      }
      if (callback) {
        Json logs{{"batch", batch}, {"size", end - start}};
        for (size_t i = 0; i < names_.size(); ++i) logs[names_[i]] = outs[i];
        stop = callback(epoch, batch, logs) || stop;
      }
      if (consult) stop = any_process(stop || context.stop_training);
      if (stop || context.stop_training) break;
    }
    std::vector<double> means = avg.mean();
    auto shown = labelled(names_, means);
    Json logs = Json::object();
    for (size_t i = 0; i < names_.size() && i < means.size(); ++i) logs[names_[i]] = means[i];
    if (validate) {
      int64_t seen = 0;
      std::vector<double> val = evaluate_sums(vx, vy, o.batch_size, 0, vsw, shared, &seen);
      if (shared) {
        val.push_back(double(seen));
        sum_across_processes(val);
        seen = int64_t(val.back());
        val.pop_back();
      }
      for (double& v : val) v = seen > 0 ? v / double(seen) : 0;
      for (size_t i = 0; i < names_.size(); ++i) logs["val_" + names_[i]] = val[i];
      for (auto& p : labelled(names_, val, "val_")) shown.push_back(p);
    }
    for (const auto& c : callbacks) c->on_epoch_end(context, epoch, logs);
    if (callback) stop = callback(epoch, -1, logs) || stop;
    if (consult) stop = any_process(stop || context.stop_training);
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
  for (const auto& c : callbacks) c->on_train_end(context);
  // Keras 3's fit ends with the optimizer's finalize_variable_values (use_ema's averages).
  if (o.epochs > 0) optimizer_->finalize();
  return history;
}

void Training::start_together(FitContext& context, const FitOptions& o, int64_t samples,
                              int64_t validation_samples) {
  // A process given other data or options would take other steps and wait for partners that
  // never come: they are compared first.
  std::string given = std::to_string(samples) + " " + std::to_string(validation_samples) + " " +
                      std::to_string(o.batch_size) + " " + std::to_string(o.epochs) + " " +
                      std::to_string(o.initial_epoch) + " " + std::to_string(o.shuffle) + " " +
                      std::to_string(o.seed);
  dist::check_same_on_every_rank(
      fingerprint(given),
      "fit: distributed: the processes' samples, validation samples, batch_size, epochs, "
      "initial_epoch, shuffle and seed (" +
          given + " here)");
  auto epoch = Buffer::make(DType::i64, {});
  *epoch->as<int64_t>() = context.initial_epoch;  // a backup's, on rank 0
  dist::broadcast(*epoch, 0, "fit: distributed: the initial epoch");
  context.initial_epoch = *epoch->as<int64_t>();
  std::vector<NodePtr> vars;
  for (const auto& w : model_.weights()) vars.push_back(w.variable);
  for (const auto& v : optimizer_->state()) vars.push_back(v);
  api::broadcast_variables(vars, 0);
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

// keras.layers.recurrent: SimpleRNN, GRU (reset_after either way) and LSTM over the backend's
// rnn, their cells computing as Keras 2.2.4's (implementation 1 and 2), with
// return_sequences, return_state, go_backwards, unroll, initial states (extra inputs) and
// dropout masks drawn once per call.
#include <cstring>

#include "core/api/control.h"
#include "core/api/conv.h"
#include "core/graph/session.h"
#include "core/api/loops.h"
#include "core/compile/function.h"
#include "core/api/random.h"
#include "core/model/activations.h"
#include "core/model/graph_math.h"
#include "core/model/initializers.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// Columns [from, from + n) of a matrix, entries [from, from + n) of a vector (Keras'
// kernel[:, :units] and bias[:units]).
NodePtr cols(const NodePtr& m, int64_t from, int64_t n) {
  return api::slice(m, {0, from}, {-1, n});
}
NodePtr part(const NodePtr& v, int64_t from, int64_t n) { return api::slice(v, {from}, {n}); }

class Recurrent : public Layer {
 public:
  Recurrent(std::string cls, const Json& c)
      : Layer(std::move(cls), c),
        units_(int_or(c, c.contains("filters") ? "filters" : "units", -1, where())),
        use_bias_(bool_or(c, "use_bias", true, where())),
        return_sequences_(bool_or(c, "return_sequences", false, where())),
        return_state_(bool_or(c, "return_state", false, where())),
        go_backwards_(bool_or(c, "go_backwards", false, where())),
        unroll_(bool_or(c, "unroll", false, where())),
        dropout_(number_or(c, "dropout", 0, where())),
        recurrent_dropout_(number_or(c, "recurrent_dropout", 0, where())),
        implementation_(int_or(c, "implementation", 1, where())) {
    check(units_ > 0, Status::invalid_argument, where(), ": units must be positive");
    stateful_ = bool_or(c, "stateful", false, where());
    activation_ = c.contains("activation") ? c["activation"] : Json("tanh");
    recurrent_activation_ =
        c.contains("recurrent_activation") ? c["recurrent_activation"] : Json("hard_sigmoid");
  }
  bool supports_masking() const override { return true; }
  // RNN.compute_mask: the input's mask for the sequences, none for a last output or states.
  Tensors compute_mask(const Tensors&, const Tensors& outputs) override {
    Tensors out(outputs.size());
    if (return_sequences_ && !masks().empty()) out[0] = masks()[0];
    return out;
  }
  void build(const std::vector<Shape>& shapes) override {
    check(!shapes.empty() && shapes[0].rank() == 3 && shapes[0].dims[2] > 0, Status::shape, where(),
          ": needs inputs (batch, timesteps, features) with features known");
    build_cell(shapes[0].dims[2]);
  }
  Tensors call(const Tensors& inputs) override {
    check(!inputs.empty(), Status::invalid_argument, where(), ": no input");
    const NodePtr& x = inputs[0];
    check(x->rank() == input_rank(), Status::shape, where(), ": needs inputs of rank ",
          input_rank());
    Tensors initial(inputs.begin() + 1, inputs.end());
    if (initial.empty() && stateful_) {
      // Keras: the states are variables of (batch_size, size), carried from call to call.
      int64_t batch = x->shape().dims[0];
      check(batch > 0, Status::shape, where(),
            ": a stateful layer needs its batch size (batch_input_shape) known");
      if (states_.empty())
        for (int64_t size : state_sizes()) {
          auto zeros = Buffer::make(compute_dtype(), {batch, size});
          std::memset(zeros->data(), 0, zeros->nbytes());
          states_.push_back(
              api::variable(zeros, compute_dtype(), Session::get().unique_name(name() + "/state")));
        }
      initial = states_;
    } else if (initial.empty()) {
      initial = zero_states(x);
    }
    check(initial.size() == state_sizes().size(), Status::invalid_argument, where(), ": ",
          initial.size(), " initial states, the layer has ", state_sizes().size());
    check(!unroll_ || x->shape().dims[1] > 0, Status::shape, where(),
          ": unroll needs the number of timesteps known");
    input_masks_.clear();
    recurrent_masks_.clear();
    api::RnnResult r = api::rnn(
        [this](const NodePtr& xt, const std::vector<NodePtr>& states) { return step(xt, states); },
        x, initial, go_backwards_, masks().empty() ? nullptr : masks()[0], {}, unroll_);
    if (stateful_ && inputs.size() == 1)
      for (size_t i = 0; i < states_.size(); ++i) {
        NodePtr u = api::update(states_[i], r.new_states[i]);
        updates_.push_back(u);
        state_updates_.push_back(u);
      }
    Tensors out{return_sequences_ ? r.outputs : r.last_output};
    if (return_state_) out.insert(out.end(), r.new_states.begin(), r.new_states.end());
    return out;
  }

 protected:
  virtual std::vector<int64_t> state_sizes() const { return {units_}; }
  virtual int64_t input_rank() const { return 3; }
  // RNN.get_initial_state: zeros (batch, size) made from the inputs' batch.
  virtual Tensors zero_states(const NodePtr& x) {
    NodePtr zero = api::expand_dims(
        api::sum(api::zeros_like(x, std::nullopt, ""), std::vector<int64_t>{1, 2}, false), -1);
    Tensors out;
    for (int64_t size : state_sizes()) out.push_back(api::tile(zero, {1, size}));
    return out;
  }
  // An LSTM's bias of 4 units: with unit_forget_bias, bias_initializer for the input gate, ones
  // for the forget gate, then the initializer again for the other two.
  NodePtr lstm_bias() {
    int64_t u = units_;
    if (!bool_or(config(), "unit_forget_bias", true, where()))
      return add_weight("bias", {4 * u}, "bias_initializer", "bias_regularizer", "bias_constraint");
    Json init = config().value("bias_initializer", Json("zeros"));
    auto value = Buffer::make(DType::f64, {4 * u});
    auto first = convert_buffer(initial_value(init, {u}, DType::f64, where()), DType::f64);
    auto rest = convert_buffer(initial_value(init, {2 * u}, DType::f64, where()), DType::f64);
    double* v = value->as<double>();
    for (int64_t i = 0; i < u; ++i) v[i] = first->as<double>()[i];
    for (int64_t i = 0; i < u; ++i) v[u + i] = 1;
    for (int64_t i = 0; i < 2 * u; ++i) v[2 * u + i] = rest->as<double>()[i];
    return add_weight_value("bias", value, "bias_regularizer", "bias_constraint");
  }
  virtual void build_cell(int64_t input_dim) = 0;
  virtual std::pair<NodePtr, Tensors> step(const NodePtr& x, const Tensors& states) = 0;

  static bool draws_masks(double rate) { return rate > 0 && rate < 1; }
  // _generate_dropout_mask: `count` masks (in training: dropout of ones; else ones) of `like`'s
  // shape, made at the first step of a call and reused by the steps after it.
  const Tensors& dropout_masks(Tensors& cache, const NodePtr& like, double rate, int count) {
    if (cache.empty() && draws_masks(rate)) {
      NodePtr ones = api::ones_like(like, std::nullopt, "");
      for (int i = 0; i < count; ++i)
        cache.push_back(api::in_train_phase(
            [&] { return api::dropout(ones, rate, std::nullopt, std::nullopt); },
            [&] { return ones; }, nullptr, std::nullopt, class_name().c_str()));
    }
    return cache;
  }
  const Tensors& input_masks(const NodePtr& x, int count) {
    return dropout_masks(input_masks_, x, dropout_, count);
  }
  const Tensors& recurrent_masks(const NodePtr& h, int count) {
    return dropout_masks(recurrent_masks_, h, recurrent_dropout_, count);
  }
  // Implementation 1's per-gate products, without dropout masks, are the column blocks of
  // implementation 2's one product (Keras: the modes differ in speed alone): one product per
  // step is fewer, larger kernels, and its gradient the concatenation of the gates'.
  bool per_gate_products() const {
    return implementation_ == 1 && (draws_masks(dropout_) || draws_masks(recurrent_dropout_));
  }
  static NodePtr masked(const NodePtr& x, const Tensors& m, size_t i) {
    return m.empty() ? x : times(x, m[i]);
  }
  NodePtr act(const NodePtr& x) { return activate(activation_, x, where(), rules()); }
  NodePtr rec_act(const NodePtr& x) { return activate(recurrent_activation_, x, where(), rules()); }

  int64_t units_;
  bool use_bias_, return_sequences_, return_state_, go_backwards_, unroll_;
  double dropout_, recurrent_dropout_;
  int64_t implementation_;
  void reset_states() override {
    for (const auto& s : states_) {
      auto zeros = Buffer::make(s->dtype(), s->shape().dims);
      std::memset(zeros->data(), 0, zeros->nbytes());
      api::set_value(s, zeros);
    }
  }
  Json activation_, recurrent_activation_;
  bool stateful_ = false;
  Tensors states_;
  NodePtr kernel_, recurrent_kernel_, bias_;
  Tensors input_masks_, recurrent_masks_;

  // Keras' kernel (input_dim, gates * units) and recurrent_kernel (units, gates * units).
  void add_kernels(int64_t input_dim, int64_t gates) {
    kernel_ = add_weight("kernel", {input_dim, gates * units_}, "kernel_initializer",
                         "kernel_regularizer", "kernel_constraint");
    recurrent_kernel_ =
        add_weight("recurrent_kernel", {units_, gates * units_}, "recurrent_initializer",
                   "recurrent_regularizer", "recurrent_constraint");
  }
};

class SimpleRNN : public Recurrent {
 public:
  explicit SimpleRNN(const Json& c) : Recurrent("SimpleRNN", c) {}

 protected:
  void build_cell(int64_t input_dim) override {
    add_kernels(input_dim, 1);
    if (use_bias_)
      bias_ =
          add_weight("bias", {units_}, "bias_initializer", "bias_regularizer", "bias_constraint");
  }
  std::pair<NodePtr, Tensors> step(const NodePtr& x, const Tensors& states) override {
    NodePtr prev = states[0];
    const Tensors& dp = input_masks(x, 1);
    const Tensors& rdp = recurrent_masks(prev, 1);
    NodePtr h = api::dot(masked(x, dp, 0), kernel_);
    if (use_bias_) h = api::bias_add(h, bias_, DataFormat::channels_last);
    NodePtr out = act(plus(h, api::dot(masked(prev, rdp, 0), recurrent_kernel_)));
    return {out, {out}};
  }
};

class LSTM : public Recurrent {
 public:
  explicit LSTM(const Json& c) : Recurrent("LSTM", c) {}

 protected:
  std::vector<int64_t> state_sizes() const override { return {units_, units_}; }
  void build_cell(int64_t input_dim) override {
    add_kernels(input_dim, 4);
    if (use_bias_) bias_ = lstm_bias();
  }
  std::pair<NodePtr, Tensors> step(const NodePtr& x, const Tensors& states) override {
    const NodePtr &h_tm1 = states[0], &c_tm1 = states[1];
    int64_t u = units_;
    NodePtr i, f, c, o;
    if (per_gate_products()) {
      const Tensors& dp = input_masks(x, 4);
      const Tensors& rdp = recurrent_masks(h_tm1, 4);
      NodePtr xs[4];
      for (int g = 0; g < 4; ++g) {
        xs[g] = api::dot(masked(x, dp, size_t(g)), cols(kernel_, g * u, u));
        if (use_bias_)
          xs[g] = api::bias_add(xs[g], part(bias_, g * u, u), DataFormat::channels_last);
      }
      auto rec = [&](int g) {
        return api::dot(masked(h_tm1, rdp, size_t(g)), cols(recurrent_kernel_, g * u, u));
      };
      i = rec_act(plus(xs[0], rec(0)));
      f = rec_act(plus(xs[1], rec(1)));
      c = plus(times(f, c_tm1), times(i, act(plus(xs[2], rec(2)))));
      o = rec_act(plus(xs[3], rec(3)));
    } else {
      const Tensors& dp = input_masks(x, 1);
      const Tensors& rdp = recurrent_masks(h_tm1, 1);
      NodePtr z = api::dot(masked(x, dp, 0), kernel_);
      z = plus(z, api::dot(masked(h_tm1, rdp, 0), recurrent_kernel_));
      if (use_bias_) z = api::bias_add(z, bias_, DataFormat::channels_last);
      i = rec_act(cols(z, 0, u));
      f = rec_act(cols(z, u, u));
      c = plus(times(f, c_tm1), times(i, act(cols(z, 2 * u, u))));
      o = rec_act(cols(z, 3 * u, u));
    }
    NodePtr h = times(o, act(c));
    return {h, {h, c}};
  }
};

class GRU : public Recurrent {
 public:
  explicit GRU(const Json& c)
      : Recurrent("GRU", c), reset_after_(bool_or(c, "reset_after", false, where())) {}

 protected:
  void build_cell(int64_t input_dim) override {
    add_kernels(input_dim, 3);
    if (!use_bias_) return;
    Dims shape = reset_after_ ? Dims{2, 3 * units_} : Dims{3 * units_};
    bias_ = add_weight("bias", shape, "bias_initializer", "bias_regularizer", "bias_constraint");
    if (reset_after_) {
      input_bias_ = api::flatten(api::slice(bias_, {0, 0}, {1, -1}));
      recurrent_bias_ = api::flatten(api::slice(bias_, {1, 0}, {1, -1}));
    } else {
      input_bias_ = bias_;
    }
  }
  std::pair<NodePtr, Tensors> step(const NodePtr& x, const Tensors& states) override {
    const NodePtr& h_tm1 = states[0];
    int64_t u = units_;
    auto badd = [&](const NodePtr& y, const NodePtr& b) {
      return api::bias_add(y, b, DataFormat::channels_last);
    };
    NodePtr z, r, hh, prev = h_tm1;  // prev: h_tm1 as the final mix reads it
    if (per_gate_products()) {
      const Tensors& dp = input_masks(x, 3);
      const Tensors& rdp = recurrent_masks(h_tm1, 3);
      NodePtr xs[3];
      for (int g = 0; g < 3; ++g) {
        xs[g] = api::dot(masked(x, dp, size_t(g)), cols(kernel_, g * u, u));
        if (use_bias_) xs[g] = badd(xs[g], part(input_bias_, g * u, u));
      }
      NodePtr rz = api::dot(masked(h_tm1, rdp, 0), cols(recurrent_kernel_, 0, u));
      NodePtr rr = api::dot(masked(h_tm1, rdp, 1), cols(recurrent_kernel_, u, u));
      if (reset_after_ && use_bias_) {
        rz = badd(rz, part(recurrent_bias_, 0, u));
        rr = badd(rr, part(recurrent_bias_, u, u));
      }
      z = rec_act(plus(xs[0], rz));
      r = rec_act(plus(xs[1], rr));
      NodePtr rh;
      if (reset_after_) {
        rh = api::dot(masked(h_tm1, rdp, 2), cols(recurrent_kernel_, 2 * u, u));
        if (use_bias_) rh = badd(rh, part(recurrent_bias_, 2 * u, u));
        rh = times(r, rh);
      } else {
        rh = api::dot(times(r, masked(h_tm1, rdp, 2)), cols(recurrent_kernel_, 2 * u, u));
      }
      hh = act(plus(xs[2], rh));
    } else {
      const Tensors& dp = input_masks(x, 1);
      const Tensors& rdp = recurrent_masks(h_tm1, 1);
      NodePtr mx = api::dot(masked(x, dp, 0), kernel_);
      if (use_bias_) mx = badd(mx, input_bias_);
      NodePtr h = masked(h_tm1, rdp, 0);
      prev = h;  // Keras 2.2.4 masks h_tm1 itself here (h_tm1 *= rec_dp_mask[0])
      NodePtr inner;
      if (reset_after_) {
        inner = api::dot(h, recurrent_kernel_);
        if (use_bias_) inner = badd(inner, recurrent_bias_);
      } else {
        inner = api::dot(h, cols(recurrent_kernel_, 0, 2 * u));
      }
      z = rec_act(plus(cols(mx, 0, u), cols(inner, 0, u)));
      r = rec_act(plus(cols(mx, u, u), cols(inner, u, u)));
      NodePtr rh = reset_after_ ? times(r, cols(inner, 2 * u, u))
                                : api::dot(times(r, h), cols(recurrent_kernel_, 2 * u, u));
      hh = act(plus(cols(mx, 2 * u, u), rh));
    }
    // h = z * h_tm1 + (1 - z) * hh
    NodePtr h = plus(times(z, prev), times(minus(number(z, 1.0), z), hh));
    return {h, {h}};
  }

 private:
  bool reset_after_;
  NodePtr input_bias_, recurrent_bias_;
};

// keras.layers.ConvLSTM1D/2D/3D: an LSTM whose gates are convolutions of Rank spatial dims,
// over (batch, time, spatial..., channels) or channels first (Keras 2.2.4 has the 2-D one).
template <int Rank>
class ConvLSTM : public Recurrent {
 public:
  explicit ConvLSTM(const Json& c)
      : Recurrent(ranked("ConvLSTM", Rank), c),
        kernel_size_(ints_or(c, "kernel_size", size_t(Rank), -1, where())),
        strides_(ints_or(c, "strides", size_t(Rank), 1, where())),
        dilation_rate_(ints_or(c, "dilation_rate", size_t(Rank), 1, where())),
        padding_(padding_of(c, where())),
        format_(data_format_of(c, where())) {
    check(!stateful_, Status::not_implemented, where(), ": a stateful ", class_name());
    for (int64_t k : kernel_size_)
      check(k > 0, Status::invalid_argument, where(), ": kernel_size must be positive");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(!shapes.empty() && shapes[0].rank() == Rank + 3, Status::shape, where(),
          ": needs inputs (batch, time, ", Rank, " spatial dims, channels) or channels first");
    int64_t channels = shapes[0].dims[size_t(channel_index())];
    check(channels > 0, Status::shape, where(), ": the channel dim must be known");
    kernel_ = add_weight("kernel", kernel_shape(channels, 4 * units_), "kernel_initializer",
                         "kernel_regularizer", "kernel_constraint");
    recurrent_kernel_ =
        add_weight("recurrent_kernel", kernel_shape(units_, 4 * units_), "recurrent_initializer",
                   "recurrent_regularizer", "recurrent_constraint");
    if (use_bias_) bias_ = lstm_bias();
  }

 protected:
  int64_t input_rank() const override { return Rank + 3; }
  std::vector<int64_t> state_sizes() const override { return {units_, units_}; }
  void build_cell(int64_t) override {}
  int64_t channel_index() const { return format_ == DataFormat::channels_first ? 2 : Rank + 2; }
  Dims kernel_shape(int64_t in, int64_t out) const {
    Dims k(kernel_size_.begin(), kernel_size_.end());
    k.push_back(in);
    k.push_back(out);
    return k;
  }
  // Gate g's slice of a kernel (its last axis) and of the bias.
  NodePtr gate(const NodePtr& k, int g) const {
    std::vector<int64_t> start(size_t(Rank + 2), 0), size(size_t(Rank + 2), -1);
    start.back() = g * units_;
    size.back() = units_;
    return api::slice(k, start, size);
  }
  NodePtr input_conv(const NodePtr& x, const NodePtr& w, const NodePtr& b) const {
    NodePtr y = convolution(x, w, strides_, padding_, format_, dilation_rate_);
    return b ? api::bias_add(y, b, format_) : y;
  }
  NodePtr recurrent_conv(const NodePtr& h, const NodePtr& w) const {
    std::vector<int64_t> ones(static_cast<size_t>(Rank), 1);
    return convolution(h, w, ones, api::Padding::same, format_, ones);
  }
  // ConvRNN2D.get_initial_state: the inputs summed over time, convolved with a zero kernel.
  Tensors zero_states(const NodePtr& x) override {
    NodePtr s = api::sum(api::zeros_like(x, std::nullopt, ""), std::vector<int64_t>{1}, false);
    Dims shape = kernel_shape(x->shape().dims[size_t(channel_index())], units_);
    NodePtr state = input_conv(s, api::zeros(shape, x->dtype(), ""), nullptr);
    return {state, state};
  }
  std::pair<NodePtr, Tensors> step(const NodePtr& x, const Tensors& states) override {
    const NodePtr &h_tm1 = states[0], &c_tm1 = states[1];
    const Tensors& dp = input_masks(x, 4);
    const Tensors& rdp = recurrent_masks(h_tm1, 4);
    NodePtr xs[4], hs[4];
    for (int g = 0; g < 4; ++g) {
      xs[g] = input_conv(masked(x, dp, size_t(g)), gate(kernel_, g),
                         use_bias_ ? part(bias_, g * units_, units_) : nullptr);
      hs[g] = recurrent_conv(masked(h_tm1, rdp, size_t(g)), gate(recurrent_kernel_, g));
    }
    NodePtr i = rec_act(plus(xs[0], hs[0]));
    NodePtr f = rec_act(plus(xs[1], hs[1]));
    NodePtr c = plus(times(f, c_tm1), times(i, act(plus(xs[2], hs[2]))));
    NodePtr o = rec_act(plus(xs[3], hs[3]));
    NodePtr h = times(o, act(c));
    return {h, {h, c}};
  }

 private:
  std::vector<int64_t> kernel_size_, strides_, dilation_rate_;
  api::Padding padding_;
  DataFormat format_;
};

const LayerRegistrar rows[] = {
    {"ConvLSTM1D", make_layer_of<ConvLSTM<1>>},
    {"ConvLSTM2D", make_layer_of<ConvLSTM<2>>},
    {"ConvLSTM3D", make_layer_of<ConvLSTM<3>>},
    {"SimpleRNN", make_layer_of<SimpleRNN>},
    {"LSTM", make_layer_of<LSTM>},
    {"GRU", make_layer_of<GRU>},
};

}  // namespace
}  // namespace kb::model

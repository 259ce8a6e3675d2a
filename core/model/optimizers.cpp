#include "core/model/optimizers.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/api/api.h"
#include "core/api/control.h"
#include "core/autodiff/gradients.h"
#include "core/backend/device.h"
#include "core/compile/function.h"
#include "core/graph/session.h"
#include "core/model/constraints.h"
#include "core/model/graph_math.h"
#include "core/model/learning_rate_schedules.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

std::shared_ptr<Buffer> scalar_buffer(double v) {
  auto b = Buffer::make(DType::f64, {});
  *b->as<double>() = v;
  return b;
}

NodePtr scalar_value(double v, DType t) {
  return api::constant(scalar_buffer(v), t, std::nullopt, "");
}

// Keras' K.zeros: a buffer of zeros (Buffer::make leaves its storage as it finds it).
std::shared_ptr<Buffer> zeros_of(DType t, const Dims& dims) {
  auto b = Buffer::make(t, dims);
  std::memset(b->data(), 0, b->nbytes());
  return b;
}

// An optimizer's slot variable of zeros (Keras 2.2.4 names them "Variable").
NodePtr zeros_variable(DType t, const Dims& dims) {
  return api::variable(zeros_of(t, dims), t, Session::get().unique_name("Variable"));
}

// The L2 norm of all of x: sqrt(sum(x^2)).
NodePtr l2_norm(const NodePtr& x) {
  return api::sqrt(api::sum(api::square(x), std::nullopt, false));
}

NodePtr variable_of(double v, DType t, const std::string& name) {
  return api::variable(scalar_buffer(v), t, Session::get().unique_name(name));
}

// beta * old + (1. - beta) * x: the moving averages of the optimizers (beta a variable).
NodePtr moving(const NodePtr& beta, const NodePtr& old, const NodePtr& x) {
  NodePtr one = scalar_value(1, beta->dtype());
  return plus(times(beta, old), times(minus(one, beta), x));
}

// Python's float(x) ** tensor as kbackend's Keras backend writes K.pow(beta, t).
NodePtr power(const NodePtr& base, const NodePtr& exponent) {
  return api::exp(times(api::cast(exponent, base->dtype()), api::log(base)));
}

class SGD : public Optimizer {
 public:
  explicit SGD(const Json& c) : Optimizer("SGD", c) {
    hyper("lr", 0.01);
    momentum_ = hyper("momentum", 0.0);
    hyper("decay", 0.0);
    nesterov_ = bool_or(c, "nesterov", false, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    std::vector<NodePtr> moments = slots(params);
    weights_.push_back(iterations_);  // Keras 2.2.4: [iterations] + moments
    weights_.insert(weights_.end(), moments.begin(), moments.end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &m = moments[i], &from = start(i);
      NodePtr v = minus(times(momentum_, m), times(lr, g));  // velocity
      ups.push_back(api::update(m, v));
      NodePtr new_p =
          nesterov_ ? minus(plus(from, times(momentum_, v)), times(lr, g)) : plus(from, v);
      ups.push_back(api::update(p, constrained(p, new_p)));
    }
    return ups;
  }

  void extra_config(Json& c) const override { c["nesterov"] = nesterov_; }

 private:
  NodePtr momentum_;
  bool nesterov_;
};

class Adam : public Optimizer {
 public:
  // AdamW is Adam with a weight decay (Keras 3's AdamW, its default 0.004).
  explicit Adam(const Json& c, const char* class_name = "Adam") : Optimizer(class_name, c) {
    hyper("lr", 0.001);
    beta_1_ = hyper("beta_1", 0.9);
    beta_2_ = hyper("beta_2", 0.999);
    hyper("decay", 0.0);
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
    amsgrad_ = bool_or(c, "amsgrad", false, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    DType fx = Session::get().floatx();
    NodePtr t = plus(api::cast(iterations_, fx), scalar_value(1, fx));
    NodePtr one = scalar_value(1, fx);
    NodePtr lr_t =
        times(lr, divided(api::sqrt(minus(one, power(beta_2_, t))), minus(one, power(beta_1_, t))));
    std::vector<NodePtr> ms = slots(params);
    std::vector<NodePtr> vs = slots(params);
    std::vector<NodePtr> vhats;
    for (const auto& p : params) vhats.push_back(amsgrad_ ? slot(p) : scalar_slot());
    weights_.push_back(iterations_);  // Keras 2.2.4: [iterations] + ms + vs + vhats
    for (auto* list : {&ms, &vs, &vhats})
      weights_.insert(weights_.end(), list->begin(), list->end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &from = start(i);
      NodePtr m_t = moving(beta_1_, ms[i], g);
      NodePtr v_t = moving(beta_2_, vs[i], api::square(g));
      NodePtr p_t;
      if (amsgrad_) {
        NodePtr vhat_t = larger(vhats[i], v_t);
        p_t = minus(from,
                    divided(times(lr_t, m_t), plus(api::sqrt(vhat_t), number(vhat_t, epsilon_))));
        ups.push_back(api::update(vhats[i], vhat_t));
      } else {
        p_t = minus(from, divided(times(lr_t, m_t), plus(api::sqrt(v_t), number(v_t, epsilon_))));
      }
      ups.push_back(api::update(ms[i], m_t));
      ups.push_back(api::update(vs[i], v_t));
      ups.push_back(api::update(p, constrained(p, p_t)));
    }
    return ups;
  }

  void extra_config(Json& c) const override {
    c["epsilon"] = epsilon_;
    c["amsgrad"] = amsgrad_;
  }

 private:
  // Keras 2.2.4 keeps K.zeros(1) per parameter as vhat when amsgrad is off.
  NodePtr scalar_slot() {
    return api::variable(zeros_of(DType::f32, {1}), Session::get().floatx(),
                         Session::get().unique_name("Variable"));
  }
  NodePtr beta_1_, beta_2_;
  double epsilon_;
  bool amsgrad_;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(const Json& c) : Optimizer("RMSprop", c) {
    hyper("lr", 0.001);
    rho_ = hyper("rho", 0.9);
    hyper("decay", 0.0);
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
    momentum_ = number_or(c, "momentum", 0, where_);
    centered_ = bool_or(c, "centered", false, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    check(rules_ != KerasRules::keras2 || (momentum_ == 0 && !centered_), Status::not_implemented,
          where_, ": momentum or centered, which Keras 2.2.4's RMSprop has not");
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    std::vector<NodePtr> acc = slots(params);
    // Keras 2.2.4 leaves iterations out of RMSprop's weights; Keras 3 keeps each kind of slot
    // for every variable in turn.
    weights_ = acc;
    std::vector<NodePtr> moments = momentum_ > 0 ? slots(params) : std::vector<NodePtr>();
    std::vector<NodePtr> averages = centered_ ? slots(params) : std::vector<NodePtr>();
    for (auto* list : {&moments, &averages})
      weights_.insert(weights_.end(), list->begin(), list->end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i];
      NodePtr new_a = moving(rho_, acc[i], api::square(g));
      ups.push_back(api::update(acc[i], new_a));
      // Keras 2.2.4: lr * g / (sqrt(a) + epsilon); Keras 3: lr * g / sqrt(a - avg^2 + epsilon),
      // avg the moving average of g when centered, else 0.
      NodePtr denominator;
      if (rules_ != KerasRules::keras2) {  // tf.keras' RMSprop too
        NodePtr under = new_a;
        if (centered_) {
          NodePtr avg = moving(rho_, averages[i], g);
          ups.push_back(api::update(averages[i], avg));
          under = minus(under, api::square(avg));
        }
        denominator = api::sqrt(plus(under, number(new_a, epsilon_)));
      } else {
        denominator = plus(api::sqrt(new_a), number(new_a, epsilon_));
      }
      NodePtr increment = divided(times(lr, g), denominator);
      if (momentum_ > 0) {
        increment = plus(times(number(g, momentum_), moments[i]), increment);
        ups.push_back(api::update(moments[i], increment));
      }
      ups.push_back(api::update(p, constrained(p, minus(start(i), increment))));
    }
    return ups;
  }

  void extra_config(Json& c) const override {
    c["epsilon"] = epsilon_;
    if (momentum_ > 0) c["momentum"] = momentum_;
    if (centered_) c["centered"] = centered_;
  }

 private:
  NodePtr rho_;
  double epsilon_, momentum_;
  bool centered_;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(const Json& c) : Optimizer("Adagrad", c) {
    hyper("lr", 0.01);
    hyper("decay", 0.0);
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
    initial_accumulator_ = number_or(c, "initial_accumulator_value", 0.1, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    // Keras 2.2.4 starts the accumulators at zero, Keras 3 at initial_accumulator_value.
    bool keras3 = rules_ != KerasRules::keras2;  // tf.keras 2.11+'s Adagrad too
    std::vector<NodePtr> acc = slots(params, keras3 ? initial_accumulator_ : 0);
    weights_ = acc;
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i];
      NodePtr new_a = plus(acc[i], api::square(g));
      ups.push_back(api::update(acc[i], new_a));
      // Keras 2.2.4: sqrt(a) + epsilon; Keras 3: sqrt(a + epsilon).
      NodePtr denominator = keras3 ? api::sqrt(plus(new_a, number(new_a, epsilon_)))
                                   : plus(api::sqrt(new_a), number(new_a, epsilon_));
      NodePtr new_p = minus(start(i), divided(times(lr, g), denominator));
      ups.push_back(api::update(p, constrained(p, new_p)));
    }
    return ups;
  }

  void extra_config(Json& c) const override { c["epsilon"] = epsilon_; }

 private:
  double epsilon_, initial_accumulator_;
};

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(const Json& c) : Optimizer("Adadelta", c) {
    hyper("lr", 1.0);
    hyper("decay", 0.0);
    rho_ = number_or(c, "rho", 0.95, where_);  // a Python float in Keras 2.2.4, not a variable
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    std::vector<NodePtr> acc = slots(params);
    std::vector<NodePtr> delta = slots(params);
    weights_ = acc;
    weights_.insert(weights_.end(), delta.begin(), delta.end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i];
      NodePtr new_a =
          plus(times(number(g, rho_), acc[i]), times(number(g, 1 - rho_), api::square(g)));
      ups.push_back(api::update(acc[i], new_a));
      NodePtr step = divided(times(g, api::sqrt(plus(delta[i], number(g, epsilon_)))),
                             api::sqrt(plus(new_a, number(g, epsilon_))));
      ups.push_back(api::update(p, constrained(p, minus(start(i), times(lr, step)))));
      NodePtr new_d =
          plus(times(number(g, rho_), delta[i]), times(number(g, 1 - rho_), api::square(step)));
      ups.push_back(api::update(delta[i], new_d));
    }
    return ups;
  }

  void extra_config(Json& c) const override {
    c["rho"] = rho_;
    c["epsilon"] = epsilon_;
  }

 private:
  double rho_, epsilon_;
};

class Adamax : public Optimizer {
 public:
  explicit Adamax(const Json& c) : Optimizer("Adamax", c) {
    hyper("lr", 0.002);
    beta_1_ = hyper("beta_1", 0.9);
    beta_2_ = hyper("beta_2", 0.999);
    hyper("decay", 0.0);
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    DType fx = Session::get().floatx();
    NodePtr one = scalar_value(1, fx);
    NodePtr t = plus(api::cast(iterations_, fx), one);
    NodePtr lr_t = divided(lr, minus(one, power(beta_1_, t)));
    std::vector<NodePtr> ms = slots(params);
    std::vector<NodePtr> us = slots(params);
    weights_.push_back(iterations_);
    for (auto* list : {&ms, &us}) weights_.insert(weights_.end(), list->begin(), list->end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i];
      NodePtr m_t = moving(beta_1_, ms[i], g);
      NodePtr u_t = larger(times(beta_2_, us[i]), api::abs(g));
      NodePtr p_t = minus(start(i), divided(times(lr_t, m_t), plus(u_t, number(u_t, epsilon_))));
      ups.push_back(api::update(ms[i], m_t));
      ups.push_back(api::update(us[i], u_t));
      ups.push_back(api::update(p, constrained(p, p_t)));
    }
    return ups;
  }

  void extra_config(Json& c) const override { c["epsilon"] = epsilon_; }

 private:
  NodePtr beta_1_, beta_2_;
  double epsilon_;
};

class Nadam : public Optimizer {
 public:
  explicit Nadam(const Json& c) : Optimizer("Nadam", c) {
    lr_ = hyper("lr", 0.002);
    beta_1_ = hyper("beta_1", 0.9);
    beta_2_ = hyper("beta_2", 0.999);
    epsilon_ = number_or(c, "epsilon", Session::get().epsilon(), where_);
    schedule_decay_ = number_or(c, "schedule_decay", 0.004, where_);
    NameScope scope(class_name_);
    m_schedule_ = variable_of(1.0, Session::get().floatx(), "m_schedule");
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    DType fx = Session::get().floatx();
    NodePtr one = scalar_value(1, fx);
    NodePtr t = plus(api::cast(iterations_, fx), one);
    // Keras 2.2.4's Nadam has no decay: its rate, or a schedule's.
    NodePtr lr = schedule_.is_null() ? lr_ : decayed_lr();
    NodePtr base = scalar_value(0.96, fx);
    // Keras 2.2.4's momentum schedule decays as 0.96^(t * schedule_decay), Keras 3's as 0.96^t.
    double exponent = rules_ != KerasRules::keras2 ? 1.0 : schedule_decay_;
    auto cache = [&](const NodePtr& step) {
      NodePtr decayed = power(base, times(step, number(step, exponent)));
      return times(beta_1_, minus(one, times(number(decayed, 0.5), decayed)));
    };
    NodePtr cache_t = cache(t), cache_t1 = cache(plus(t, number(t, 1.0)));
    NodePtr schedule_new = times(m_schedule_, cache_t);
    NodePtr schedule_next = times(times(m_schedule_, cache_t), cache_t1);
    ups.push_back(api::update(m_schedule_, schedule_new));
    std::vector<NodePtr> ms = slots(params);
    std::vector<NodePtr> vs = slots(params);
    weights_.push_back(iterations_);
    for (auto* list : {&ms, &vs}) weights_.insert(weights_.end(), list->begin(), list->end());
    trailing_ = {m_schedule_};  // Keras 3's u_product
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i];
      NodePtr g_prime = divided(g, minus(one, schedule_new));
      NodePtr m_t = moving(beta_1_, ms[i], g);
      NodePtr m_t_prime = divided(m_t, minus(one, schedule_next));
      NodePtr v_t = moving(beta_2_, vs[i], api::square(g));
      NodePtr v_t_prime = divided(v_t, minus(one, power(beta_2_, t)));
      NodePtr m_t_bar = plus(times(minus(one, cache_t), g_prime), times(cache_t1, m_t_prime));
      ups.push_back(api::update(ms[i], m_t));
      ups.push_back(api::update(vs[i], v_t));
      NodePtr p_t = minus(start(i), divided(times(lr, m_t_bar), plus(api::sqrt(v_t_prime),
                                                                     number(v_t_prime, epsilon_))));
      ups.push_back(api::update(p, constrained(p, p_t)));
    }
    return ups;
  }
  void extra_config(Json& c) const override {
    c["schedule_decay"] = schedule_decay_;
    c["epsilon"] = epsilon_;
  }

 private:
  NodePtr lr_, beta_1_, beta_2_, m_schedule_;
  double epsilon_, schedule_decay_;
};

// Keras 3's Lion: the sign of an interpolation of momentum and gradient, then the momentum.
class Lion : public Optimizer {
 public:
  explicit Lion(const Json& c) : Optimizer("Lion", c) {
    hyper("lr", 0.001);
    beta_1_ = number_or(c, "beta_1", 0.9, where_);
    beta_2_ = number_or(c, "beta_2", 0.99, where_);
    check(beta_1_ > 0 && beta_1_ <= 1, Status::invalid_argument, where_,
          ": beta_1 must be in (0, 1]");
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    std::vector<NodePtr> ms = slots(params);
    weights_.push_back(iterations_);
    weights_.insert(weights_.end(), ms.begin(), ms.end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &m = ms[i];
      NodePtr direction = api::sign(moving(number(m, beta_1_), m, g));
      ups.push_back(api::update(p, constrained(p, minus(start(i), times(lr, direction)))));
      ups.push_back(api::update(m, moving(number(m, beta_2_), m, g)));
    }
    return ups;
  }
  void extra_config(Json& c) const override {
    c["beta_1"] = beta_1_;
    c["beta_2"] = beta_2_;
  }

 private:
  double beta_1_, beta_2_;
};

// Keras 3's Lamb: Adam's step scaled by the trust ratio ||p|| / ||step|| (1 where either is 0).
class Lamb : public Optimizer {
 public:
  explicit Lamb(const Json& c) : Optimizer("Lamb", c) {
    hyper("lr", 0.001);
    beta_1_ = number_or(c, "beta_1", 0.9, where_);
    beta_2_ = number_or(c, "beta_2", 0.999, where_);
    epsilon_ = number_or(c, "epsilon", 1e-7, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    DType fx = Session::get().floatx();
    NodePtr one = scalar_value(1, fx), t = plus(api::cast(iterations_, fx), one);
    NodePtr beta_1_power = power(scalar_value(beta_1_, fx), t);
    NodePtr beta_2_power = power(scalar_value(beta_2_, fx), t);
    std::vector<NodePtr> ms = slots(params), vs = slots(params);
    weights_.push_back(iterations_);
    for (auto* list : {&ms, &vs}) weights_.insert(weights_.end(), list->begin(), list->end());
    auto positive = [](const NodePtr& x) {
      return api::cast(api::binary_op("greater", ops::Greater, x, number(x, 0)), x->dtype());
    };
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &from = start(i);
      NodePtr m_t = moving(number(g, beta_1_), ms[i], g);
      NodePtr v_t = moving(number(g, beta_2_), vs[i], api::square(g));
      NodePtr m_hat = divided(m_t, minus(one, beta_1_power));
      NodePtr v_sqrt = plus(api::sqrt(divided(v_t, minus(one, beta_2_power))), number(g, epsilon_));
      NodePtr step = divided(m_hat, v_sqrt);
      NodePtr w_norm = l2_norm(from), g_norm = l2_norm(step);
      // ratio = w / g where both are positive, else 1 (g's zero guarded from the division).
      NodePtr both = times(positive(w_norm), positive(g_norm));
      NodePtr safe_g = plus(g_norm, minus(one, positive(g_norm)));
      NodePtr ratio = plus(times(both, divided(w_norm, safe_g)), minus(one, both));
      ups.push_back(api::update(ms[i], m_t));
      ups.push_back(api::update(vs[i], v_t));
      ups.push_back(api::update(p, constrained(p, minus(from, times(times(ratio, lr), step)))));
    }
    return ups;
  }
  void extra_config(Json& c) const override {
    c["beta_1"] = beta_1_;
    c["beta_2"] = beta_2_;
    c["epsilon"] = epsilon_;
  }

 private:
  double beta_1_, beta_2_, epsilon_;
};

// Keras 3's Ftrl ("Follow The Regularized Leader"): per-coordinate rates from the accumulated
// squared gradients, the weights solved from a linear term with L1 and L2 penalties.
class Ftrl : public Optimizer {
 public:
  explicit Ftrl(const Json& c) : Optimizer("Ftrl", c) {
    hyper("lr", 0.001);
    power_ = number_or(c, "learning_rate_power", -0.5, where_);
    initial_ = number_or(c, "initial_accumulator_value", 0.1, where_);
    l1_ = number_or(c, "l1_regularization_strength", 0, where_);
    l2_ = number_or(c, "l2_regularization_strength", 0, where_);
    shrinkage_ = number_or(c, "l2_shrinkage_regularization_strength", 0, where_);
    beta_ = number_or(c, "beta", 0, where_);
    check(initial_ >= 0 && power_ <= 0 && l1_ >= 0 && l2_ >= 0 && shrinkage_ >= 0,
          Status::invalid_argument, where_,
          ": initial_accumulator_value and the regularization strengths must be >= 0, "
          "learning_rate_power <= 0");
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups;
    NodePtr lr = decayed_lr();
    std::vector<NodePtr> accs = slots(params, initial_), linears = slots(params);
    weights_.push_back(iterations_);
    for (auto* list : {&accs, &linears})
      weights_.insert(weights_.end(), list->begin(), list->end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &from = start(i);
      NodePtr lr_p = api::cast(lr, p->dtype());
      NodePtr l2 = plus(number(p, l2_), divided(number(p, beta_), times(number(p, 2), lr_p)));
      NodePtr grad = plus(g, times(number(p, 2 * shrinkage_), from));
      NodePtr new_acc = plus(accs[i], api::square(g));
      NodePtr rate_new = api::pow(new_acc, -power_), rate_old = api::pow(accs[i], -power_);
      NodePtr linear =
          plus(linears[i], minus(grad, times(divided(minus(rate_new, rate_old), lr_p), from)));
      NodePtr quadratic = plus(divided(rate_new, lr_p), times(number(p, 2), l2));
      NodePtr clipped = api::clip(linear, -l1_, l1_);
      ups.push_back(api::update(linears[i], linear));
      ups.push_back(api::update(p, constrained(p, divided(minus(clipped, linear), quadratic))));
      ups.push_back(api::update(accs[i], new_acc));
    }
    return ups;
  }
  void extra_config(Json& c) const override {
    c["learning_rate_power"] = power_;
    c["initial_accumulator_value"] = initial_;
    c["l1_regularization_strength"] = l1_;
    c["l2_regularization_strength"] = l2_;
    c["l2_shrinkage_regularization_strength"] = shrinkage_;
    c["beta"] = beta_;
  }

 private:
  double power_, initial_, l1_, l2_, shrinkage_, beta_;
};

// Keras 3's Adafactor: second moments factored into row and column means for weights of rank
// 2 or more (r over the last axis, c over the one before), the step clipped by its RMS and
// scaled by the weight's RMS and the relative step min(lr, 1 / sqrt(t)).
class Adafactor : public Optimizer {
 public:
  explicit Adafactor(const Json& c) : Optimizer("Adafactor", c) {
    hyper("lr", 0.001);
    beta_2_decay_ = number_or(c, "beta_2_decay", -0.8, where_);
    epsilon_1_ = number_or(c, "epsilon_1", 1e-30, where_);
    epsilon_2_ = number_or(c, "epsilon_2", 1e-3, where_);
    clip_threshold_ = number_or(c, "clip_threshold", 1.0, where_);
    relative_step_ = bool_or(c, "relative_step", true, where_);
  }
  std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                            const std::vector<NodePtr>& grads) override {
    std::vector<NodePtr> ups, rs, cs;
    DType fx = Session::get().floatx();
    NodePtr lr = decayed_lr(), t = plus(api::cast(iterations_, fx), scalar_value(1, fx));
    NodePtr inverse_root = divided(scalar_value(1, fx), api::sqrt(t));
    if (schedule_.is_null() && relative_step_) lr = smaller(lr, inverse_root);
    NodePtr rho = smaller(lr, inverse_root);
    NodePtr beta = minus(scalar_value(1, fx), api::pow(t, beta_2_decay_));
    auto rms = [](const NodePtr& x) {
      return api::sqrt(api::mean(api::square(x), std::nullopt, false));
    };
    // r and c: the factored moments (scalars, never updated, below rank 2); v: the full one.
    for (const auto& p : params) {
      int64_t rank = p->rank();
      Dims dims = p->shape().dims;
      Dims r_dims = rank < 2 ? Dims{} : Dims(dims.begin(), dims.end() - 1);
      Dims c_dims = rank < 2 ? Dims{} : dims;
      if (rank >= 2) c_dims.erase(c_dims.end() - 2);
      rs.push_back(zeros_variable(p->dtype(), r_dims));
      cs.push_back(zeros_variable(p->dtype(), c_dims));
    }
    std::vector<NodePtr> vs = slots(params);
    weights_.push_back(iterations_);
    for (auto* list : {&rs, &cs, &vs}) weights_.insert(weights_.end(), list->begin(), list->end());
    for (size_t i = 0; i < params.size(); ++i) {
      const NodePtr &p = params[i], &g = grads[i], &from = start(i);
      NodePtr b = api::cast(beta, p->dtype()), one = number(p, 1);
      NodePtr alpha = times(larger(number(p, epsilon_2_), rms(from)), api::cast(rho, p->dtype()));
      NodePtr squared = plus(api::square(g), number(g, epsilon_1_));
      NodePtr v;
      if (p->rank() >= 2) {
        int64_t last = p->rank() - 1;
        NodePtr r =
            plus(times(b, rs[i]),
                 times(minus(one, b), api::mean(squared, std::vector<int64_t>{last}, false)));
        NodePtr c =
            plus(times(b, cs[i]),
                 times(minus(one, b), api::mean(squared, std::vector<int64_t>{last - 1}, false)));
        ups.push_back(api::update(rs[i], r));
        ups.push_back(api::update(cs[i], c));
        NodePtr row = divided(r, api::mean(r, std::vector<int64_t>{last - 1}, true));
        v = times(api::expand_dims(row, -1), api::expand_dims(c, -2));
      } else {
        v = plus(times(b, vs[i]), times(minus(one, b), squared));
      }
      ups.push_back(api::update(vs[i], v));
      NodePtr u = divided(g, api::sqrt(v));
      NodePtr u_hat = divided(u, larger(one, divided(rms(u), number(u, clip_threshold_))));
      ups.push_back(api::update(p, constrained(p, minus(from, times(alpha, u_hat)))));
    }
    return ups;
  }
  void extra_config(Json& c) const override {
    c["beta_2_decay"] = beta_2_decay_;
    c["epsilon_1"] = epsilon_1_;
    c["epsilon_2"] = epsilon_2_;
    c["clip_threshold"] = clip_threshold_;
    c["relative_step"] = relative_step_;
  }

 private:
  double beta_2_decay_, epsilon_1_, epsilon_2_, clip_threshold_;
  bool relative_step_;
};

std::string lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Optimizer::Optimizer(std::string class_name, const Json& config)
    : class_name_(std::move(class_name)), where_("optimizer " + class_name_), config_(config) {
  check(config_.is_object(), Status::invalid_argument, where_, ": its config is not an object");
  // tf.keras names the rate learning_rate; Keras 3 and tf.keras may give a schedule there, whose
  // first rate the lr variable reports.
  if (config_.contains("learning_rate") && !config_.contains("lr"))
    config_["lr"] = config_["learning_rate"];
  if (config_.contains("lr") && is_learning_rate_schedule(config_["lr"])) {
    schedule_ = config_["lr"];
    config_["lr"] = initial_learning_rate(schedule_, where_);
    scheduled_learning_rate(schedule_, scalar_value(0, Session::get().floatx()),
                            where_);  // checks it
  }
  initial_decay_ = number_or(config_, "decay", 0, where_);
  clipnorm_ = number_or(config_, "clipnorm", 0, where_);
  global_clipnorm_ = number_or(config_, "global_clipnorm", 0, where_);
  clipvalue_ = number_or(config_, "clipvalue", 0, where_);
  weight_decay_ = number_or(config_, "weight_decay", 0, where_);
  use_ema_ = bool_or(config_, "use_ema", false, where_);
  ema_momentum_ = number_or(config_, "ema_momentum", 0.99, where_);
  ema_overwrite_frequency_ = int_or(config_, "ema_overwrite_frequency", 0, where_);
  check(ema_overwrite_frequency_ >= 0, Status::invalid_argument, where_,
        ": ema_overwrite_frequency must be positive");
  check(int_or(config_, "gradient_accumulation_steps", 1, where_) <= 1, Status::not_implemented,
        where_, ": gradient_accumulation_steps");
  check(!config_.contains("loss_scale_factor") || config_["loss_scale_factor"].is_null(),
        Status::not_implemented, where_, ": loss_scale_factor");
  NameScope scope(class_name_);
  iterations_ =
      api::variable(zeros_of(DType::i64, {}), DType::i64, Session::get().unique_name("iterations"));
}

NodePtr Optimizer::hyper(const char* key, double fallback) {
  double v = number_or(config_, key, fallback, where_);
  NameScope scope(class_name_);
  NodePtr n = variable_of(v, Session::get().floatx(), key);
  hypers_.emplace_back(key, n);
  return n;
}

NodePtr Optimizer::decayed_lr() {
  if (!schedule_.is_null())
    return scheduled_learning_rate(schedule_, api::cast(iterations_, Session::get().floatx()),
                                   where_);
  NodePtr lr = hypers_.front().second;
  if (initial_decay_ <= 0) return lr;
  NodePtr decay;
  for (auto& [k, v] : hypers_)
    if (k == "decay") decay = v;
  NodePtr its = api::cast(iterations_, decay->dtype());
  NodePtr one = number(decay, 1.0);
  return times(lr, divided(one, plus(one, times(decay, its))));
}

double Optimizer::learning_rate() {
  NodePtr rate = schedule_.is_null() ? hypers_.front().second : decayed_lr();
  std::shared_ptr<Buffer> v = convert_buffer(evaluate(rate), DType::f64);
  return *v->as<double>();
}

void Optimizer::set_learning_rate(double rate, const std::string& where) {
  check(schedule_.is_null(), Status::invalid_argument, where, ": the optimizer was made with a ",
        "learning-rate schedule, so its learning rate is not settable; give it a number as its ",
        "learning_rate");
  auto v = Buffer::make(DType::f64, {});
  *v->as<double>() = rate;
  api::set_value(hypers_.front().second, v);
}

std::vector<NodePtr> Optimizer::slots(const std::vector<NodePtr>& params, double value) {
  std::vector<NodePtr> out;
  for (const auto& p : params) out.push_back(slot(p, value));
  return out;
}

NodePtr Optimizer::slot(const NodePtr& like, double value) {
  check(like->shape().fully_known(), Status::shape, where_, ": a weight of unknown shape");
  if (value == 0) return zeros_variable(like->dtype(), like->shape().dims);
  std::shared_ptr<Buffer> first = zeros_of(DType::f64, like->shape().dims);
  for (int64_t i = 0, n = first->numel(); i < n; ++i) first->as<double>()[i] = value;
  return api::variable(convert_buffer(first, like->dtype()), like->dtype(),
                       Session::get().unique_name("Variable"));
}

NodePtr Optimizer::constrained(const NodePtr& p, const NodePtr& new_p) const {
  if (deferring_constraints_) return new_p;  // applied after the moving averages (use_ema)
  auto it = constraints_.find(p.get());
  return it == constraints_.end() ? new_p : constrain(it->second, new_p, where_);
}

std::vector<NodePtr> Optimizer::updates(const NodePtr& loss, const std::vector<NodePtr>& params,
                                        const std::map<const Node*, Json>& constraints,
                                        const GradientTransform& transform) {
  constraints_ = constraints;
  std::vector<NodePtr> grads = gradients(loss, params);
  if (transform)
    for (auto& g : grads) g = transform(g);
  // Keras 2.2.4's clipnorm (and Keras 3's global_clipnorm) scales every gradient by the norm of
  // them all; Keras 3's clipnorm scales each by its own norm: g * clip / max(norm, clip).
  // (Keras 3 and tf.keras refuse both at once.)
  bool per_gradient = rules_ != KerasRules::keras2;  // Keras 3's and tf.keras' clipnorm
  double global = per_gradient || clipnorm_ == 0 ? global_clipnorm_ : clipnorm_;
  if (per_gradient && clipnorm_ > 0)
    for (auto& g : grads) {
      NodePtr norm = l2_norm(g);
      NodePtr limit = number(norm, clipnorm_);
      g = times(g, divided(limit, larger(norm, limit)));
    }
  if (global > 0) {
    // keras.optimizers.clip_norm: g * clipnorm / norm where norm >= clipnorm.
    NodePtr norm;
    for (const auto& g : grads) {
      NodePtr s = api::sum(api::square(g), std::nullopt, false);
      norm = norm ? plus(norm, s) : s;
    }
    norm = api::sqrt(norm);
    for (auto& g : grads) {
      NodePtr scaled = times(divided(number(norm, global), norm), g);
      NodePtr cond = api::binary_op("greater_equal", ops::GreaterEqual, norm, number(norm, global));
      NodePtr plain = g;
      g = api::switch_(
          cond, [&] { return scaled; }, [&] { return plain; });
    }
  }
  if (clipvalue_ > 0)
    for (auto& g : grads) g = api::clip(g, -clipvalue_, clipvalue_);
  starts_.clear();
  NodePtr decay_lr = weight_decay_ > 0 ? decayed_lr() : nullptr;
  for (const auto& p : params)
    starts_.push_back(decay_lr ? minus(p, times(times(p, number(p, weight_decay_)),
                                                api::cast(decay_lr, p->dtype())))
                               : p);
  std::vector<NodePtr> ups{api::update_add(iterations_, scalar_value(1, DType::i64))};
  params_ = params;
  deferring_constraints_ = use_ema_;
  std::vector<NodePtr> rule_ups = rule(params, grads);
  deferring_constraints_ = false;
  if (use_ema_) with_moving_averages(params, rule_ups);
  for (auto& u : rule_ups) ups.push_back(u);
  return ups;
}

std::vector<NodePtr> Optimizer::state() const {
  std::vector<NodePtr> out;
  auto add = [&](const NodePtr& v) {
    if (v && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  add(iterations_);
  for (const auto* list : {&weights_, &averages_, &trailing_})
    for (const auto& v : *list) add(v);
  for (const auto& [key, v] : hypers_) add(v);
  return out;
}

void Optimizer::take_state_of(const Optimizer& other) {
  std::vector<NodePtr> mine = state(), theirs = other.state();
  check(mine.size() == theirs.size() && class_name_ == other.class_name_, Status::internal, where_,
        ": the state of another optimizer (", theirs.size(), " variables for ", mine.size(), ")");
  for (size_t i = 0; i < mine.size(); ++i) {
    check(mine[i]->dtype() == theirs[i]->dtype() && mine[i]->shape() == theirs[i]->shape(),
          Status::internal, where_, ": the state of another optimizer differs in variable ", i);
    api::set_value(mine[i], to_host(theirs[i]->value));
  }
}

void Optimizer::with_moving_averages(const std::vector<NodePtr>& params,
                                     std::vector<NodePtr>& ups) {
  // Keras 3 after each update step: average = m * average + (1 - m) * p, m the ema_momentum
  // but 0 at the first step; every ema_overwrite_frequency steps p takes its average; then
  // p's constraint.
  averages_ = slots(params);
  DType fx = Session::get().floatx();
  NodePtr not_first = api::cast(api::binary_op("not_equal", ops::NotEqual, iterations_,
                                               api::zeros_like(iterations_, std::nullopt, "")),
                                fx);
  NodePtr m = times(not_first, scalar_value(ema_momentum_, fx));
  NodePtr overwrite;
  if (ema_overwrite_frequency_ > 0) {
    NodePtr step = plus(api::cast(iterations_, DType::f64), scalar_value(1, DType::f64));
    NodePtr q = divided(step, scalar_value(double(ema_overwrite_frequency_), DType::f64));
    overwrite = api::cast(api::binary_op("equal", ops::Equal, floored(q), q), fx);
  }
  size_t n = ups.size();
  for (size_t k = 0; k < n; ++k) {
    NodePtr& u = ups[k];
    if (!u->is(ops::Assign)) continue;
    auto at = std::find(params.begin(), params.end(), u->inputs[0]);
    if (at == params.end()) continue;
    size_t i = size_t(at - params.begin());
    const NodePtr& p = params[i];
    NodePtr new_p = u->inputs[1];
    NodePtr mm = api::cast(m, p->dtype()), one = number(new_p, 1);
    NodePtr average = plus(times(mm, averages_[i]), times(minus(one, mm), new_p));
    NodePtr final_p = new_p;
    if (overwrite) {
      NodePtr o = api::cast(overwrite, p->dtype());
      final_p = plus(times(o, average), times(minus(one, o), new_p));
    }
    u = api::update(p, constrained(p, final_p));
    ups.push_back(api::update(averages_[i], average));
  }
}

void Optimizer::finalize() {
  if (!use_ema_) return;
  for (size_t i = 0; i < params_.size() && i < averages_.size(); ++i)
    api::set_value(params_[i], evaluate(averages_[i]));
}

Json Optimizer::config() const {
  Json c = Json::object();
  for (const auto& [key, node] : hypers_) {
    double v = node->value->dtype == DType::f64 ? *node->value->as<double>()
                                                : double(*node->value->as<float>());
    c[key] = v;
  }
  extra_config(c);
  for (auto it = config_.begin(); it != config_.end(); ++it)
    if (!c.contains(it.key()) && it.key() != "learning_rate" && it.key() != "name")
      c[it.key()] = it.value();
  if (!schedule_.is_null()) {  // the schedule, as tf.keras and Keras 3 write it
    c.erase("lr");
    c["learning_rate"] = schedule_;
  }
  return Json{{"class_name", class_name_}, {"config", c}};
}

std::unique_ptr<Optimizer> Optimizer::make(const Json& spec, const Json& overrides,
                                           KerasRules rules) {
  std::unique_ptr<Optimizer> o = make_of_class(spec, overrides);
  o->rules_ = rules;
  return o;
}

std::unique_ptr<Optimizer> Optimizer::make_of_class(const Json& spec, const Json& overrides) {
  std::string name;
  Json config = Json::object();
  if (spec.is_string()) {
    name = spec.get<std::string>();
  } else {
    check(spec.is_object(), Status::invalid_argument,
          "optimizer: neither a name nor {class_name, config}");
    name = required_string(spec, "class_name", "optimizer");
    if (spec.contains("config") && spec["config"].is_object()) config = spec["config"];
  }
  if (overrides.is_object())
    for (auto it = overrides.begin(); it != overrides.end(); ++it) config[it.key()] = it.value();
  // tf.keras 2.11+: "Custom>Adam" or "keras.optimizers.Adam"; options Keras 2.2.4 lacks must be
  // off.
  for (const char* prefix : {"Custom>", "keras.optimizers.", "keras.optimizers.legacy."})
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::strlen(prefix));
  std::string k = lowered(name);
  if (k == "sgd") return std::make_unique<SGD>(config);
  if (k == "adam") return std::make_unique<Adam>(config);
  if (k == "adamw") {
    if (!config.contains("weight_decay") || config["weight_decay"].is_null())
      config["weight_decay"] = 0.004;
    return std::make_unique<Adam>(config, "AdamW");
  }
  if (k == "lion") return std::make_unique<Lion>(config);
  if (k == "lamb") return std::make_unique<Lamb>(config);
  if (k == "ftrl") return std::make_unique<Ftrl>(config);
  if (k == "adafactor") return std::make_unique<Adafactor>(config);
  if (k == "rmsprop") return std::make_unique<RMSprop>(config);
  if (k == "adagrad") return std::make_unique<Adagrad>(config);
  if (k == "adadelta") return std::make_unique<Adadelta>(config);
  if (k == "adamax") return std::make_unique<Adamax>(config);
  if (k == "nadam") return std::make_unique<Nadam>(config);
  fail(Status::not_implemented, "optimizer: unknown optimizer '", name, "'");
}

}  // namespace kb::model

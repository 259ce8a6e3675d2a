#include "core/graph/session.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "core/util/error.h"

namespace kb {

Session& Session::get() {
  static Session s;
  return s;
}

Session::Session() { load_config(); }

static std::optional<std::string> json_string(const std::string& text, const std::string& key) {
  std::smatch m;
  std::regex re("\"" + key + "\"\\s*:\\s*\"([^\"]*)\"");
  if (std::regex_search(text, m, re)) return m[1].str();
  return std::nullopt;
}

static std::optional<double> json_number(const std::string& text, const std::string& key) {
  std::smatch m;
  std::regex re("\"" + key + "\"\\s*:\\s*([-+0-9.eE]+)");
  if (std::regex_search(text, m, re)) {
    try {
      return std::stod(m[1].str());
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

static void apply_floatx(const std::string& v, DType& out) {
  if (v == "float16") out = DType::f16;
  if (v == "float32") out = DType::f32;
  if (v == "float64") out = DType::f64;
}

static void apply_format(const std::string& v, DataFormat& out) {
  if (v == "channels_last") out = DataFormat::channels_last;
  if (v == "channels_first") out = DataFormat::channels_first;
}

void Session::load_config() {
  std::string dir;
  if (const char* home = std::getenv("KERAS_HOME")) {
    dir = home;
  } else if (const char* user = std::getenv("HOME")) {
    dir = std::string(user) + "/.keras";
  }
  if (!dir.empty()) {
    std::ifstream in(dir + "/keras.json");
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      if (auto v = json_string(text, "floatx")) apply_floatx(*v, floatx_);
      if (auto v = json_number(text, "epsilon")) epsilon_ = *v;
      if (auto v = json_string(text, "image_data_format")) apply_format(*v, data_format_);
    }
  }
  if (const char* v = std::getenv("KB_FLOATX")) apply_floatx(v, floatx_);
  if (const char* v = std::getenv("KB_EPSILON")) epsilon_ = std::atof(v);
  if (const char* v = std::getenv("KB_IMAGE_DATA_FORMAT")) apply_format(v, data_format_);
}

DType Session::floatx() const {
  std::lock_guard<std::mutex> l(mu_);
  return floatx_;
}
void Session::set_floatx(DType t) {
  // Keras' three floatx types; bfloat16 tensors are made with an explicit dtype.
  check(is_floating(t) && t != DType::bf16, Status::invalid_argument,
        "set_floatx: unknown floatx type ", dtype_name(t),
        " (expected float16, float32 or float64)");
  std::lock_guard<std::mutex> l(mu_);
  floatx_ = t;
}
double Session::epsilon() const {
  std::lock_guard<std::mutex> l(mu_);
  return epsilon_;
}
void Session::set_epsilon(double e) {
  std::lock_guard<std::mutex> l(mu_);
  epsilon_ = e;
}
DataFormat Session::image_data_format() const {
  std::lock_guard<std::mutex> l(mu_);
  return data_format_;
}
void Session::set_image_data_format(DataFormat f) {
  std::lock_guard<std::mutex> l(mu_);
  data_format_ = f;
}

int64_t Session::get_uid(const std::string& prefix) {
  std::lock_guard<std::mutex> l(mu_);
  return ++uids_[prefix];
}
void Session::reset_uids() {
  std::lock_guard<std::mutex> l(mu_);
  uids_.clear();
}

void Session::clear_session() {
  std::lock_guard<std::mutex> l(mu_);
  uids_.clear();
  phase_node_.reset();
  phase_.reset();
  phase_stack_.clear();
  scopes_.clear();
  names_in_use_.clear();
}

bool Session::manual_variable_initialization() const {
  std::lock_guard<std::mutex> l(mu_);
  return manual_init_;
}
void Session::set_manual_variable_initialization(bool v) {
  std::lock_guard<std::mutex> l(mu_);
  manual_init_ = v;
}

NodePtr Session::phase_node() const {
  std::lock_guard<std::mutex> l(mu_);
  return phase_node_;
}

NodePtr Session::keep_phase_node(NodePtr n) {
  std::lock_guard<std::mutex> l(mu_);
  if (!phase_node_) phase_node_ = std::move(n);
  return phase_node_;
}

std::optional<int> Session::fixed_learning_phase() const {
  std::lock_guard<std::mutex> l(mu_);
  return phase_;
}

void Session::set_learning_phase(int value) {
  check(value == 0 || value == 1, Status::invalid_argument,
        "set_learning_phase: expected learning phase to be 0 or 1, got ", value);
  std::lock_guard<std::mutex> l(mu_);
  phase_ = value;
}

void Session::push_learning_phase(int value) {
  check(value == 0 || value == 1, Status::invalid_argument,
        "learning_phase_scope: expected learning phase to be 0 or 1, got ", value);
  std::lock_guard<std::mutex> l(mu_);
  phase_stack_.push_back(phase_);
  phase_ = value;
}

void Session::pop_learning_phase() {
  std::lock_guard<std::mutex> l(mu_);
  check(!phase_stack_.empty(), Status::invalid_argument,
        "learning_phase_scope: pop without a matching push");
  phase_ = phase_stack_.back();
  phase_stack_.pop_back();
}

void Session::push_name_scope(const std::string& scope) {
  check(!scope.empty(), Status::invalid_argument, "name_scope: the scope name is empty");
  std::lock_guard<std::mutex> l(mu_);
  scopes_.push_back(scope);
}

void Session::pop_name_scope() {
  std::lock_guard<std::mutex> l(mu_);
  check(!scopes_.empty(), Status::invalid_argument, "name_scope: pop without a matching push");
  scopes_.pop_back();
}

std::string Session::scoped_name(const std::string& base) {
  std::lock_guard<std::mutex> l(mu_);
  std::string s;
  for (auto& sc : scopes_) s += sc + "/";
  return s + base;
}

std::string Session::unique_name(const std::string& base) {
  std::string name = scoped_name(base);
  std::lock_guard<std::mutex> l(mu_);
  int64_t& count = names_in_use_[name];
  if (count++ == 0) return name;
  // TensorFlow's rule: name_<k> for the first k from the count on that is still free.
  std::string candidate;
  for (int64_t k = count - 1;; ++k) {
    candidate = name + "_" + std::to_string(k);
    if (names_in_use_.emplace(candidate, 1).second) return candidate;
  }
}

uint64_t Session::next_node_id() { return next_id_.fetch_add(1); }

void Session::set_print_sink(PrintSink sink) {
  std::lock_guard<std::mutex> l(mu_);
  sink_ = std::move(sink);
}

void Session::print(const std::string& text) {
  PrintSink sink;
  {
    std::lock_guard<std::mutex> l(mu_);
    sink = sink_;
  }
  if (sink) {
    sink(text);
  } else {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
}

}  // namespace kb

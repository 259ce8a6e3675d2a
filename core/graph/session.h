// Process-wide Keras state: configuration (keras.json), uids, name scopes, the learning phase.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/dtype.h"
#include "core/graph/node.h"

namespace kb {

enum class DataFormat : int32_t { channels_last = 0, channels_first = 1 };

using PrintSink = std::function<void(const std::string& text)>;

class Session {
 public:
  static Session& get();

  DType floatx() const;
  void set_floatx(DType t);
  double epsilon() const;
  void set_epsilon(double e);
  DataFormat image_data_format() const;
  void set_image_data_format(DataFormat f);

  int64_t get_uid(const std::string& prefix);
  void reset_uids();
  void clear_session();

  bool manual_variable_initialization() const;
  void set_manual_variable_initialization(bool v);

  // The learning phase (api::learning_phase builds its node): fixed, or a bool scalar
  // placeholder with default 0, made once per session.
  std::optional<int> fixed_learning_phase() const;
  NodePtr phase_node() const;  // null until kept
  // Keeps n as the placeholder unless one was kept meanwhile; returns the one kept.
  NodePtr keep_phase_node(NodePtr n);
  void set_learning_phase(int value);
  void push_learning_phase(int value);
  void pop_learning_phase();

  void push_name_scope(const std::string& scope);
  void pop_name_scope();
  std::string scoped_name(const std::string& base);
  // scoped_name made unique in this session as TensorFlow's graphs make names unique: the
  // first "scope/w" is itself, the next ones "scope/w_1", "scope/w_2"... (Keras saves weights
  // under their names, which must differ).
  std::string unique_name(const std::string& base);

  uint64_t next_node_id();

  void set_print_sink(PrintSink sink);
  void print(const std::string& text);

  // Reads $KERAS_HOME/keras.json (default ~/.keras/keras.json) and the environment overrides.
  void load_config();

 private:
  Session();
  mutable std::mutex mu_;
  DType floatx_ = DType::f32;
  double epsilon_ = 1e-7;
  DataFormat data_format_ = DataFormat::channels_last;
  bool manual_init_ = false;
  std::map<std::string, int64_t> uids_;
  std::vector<std::string> scopes_;
  std::unordered_map<std::string, int64_t> names_in_use_;  // unique_name's counts
  std::optional<int> phase_;
  std::vector<std::optional<int>> phase_stack_;
  NodePtr phase_node_;
  std::atomic<uint64_t> next_id_{1};
  PrintSink sink_;
};

// A name scope pushed for the lifetime of the object, popped on the way out of an exception too.
class NameScope {
 public:
  explicit NameScope(const std::string& scope) { Session::get().push_name_scope(scope); }
  ~NameScope() {
    // Popping fails only on an empty stack (another thread popped past this scope): nothing is
    // left to undo then, and a destructor must not throw.
    try {
      Session::get().pop_name_scope();
    } catch (...) {
    }
  }
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
};

}  // namespace kb

// An op's name as code refers to it. Only the constants of namespace ops (core/ops/op_names.h)
// make one, so that code cannot name an op by a string that the compiler does not check.
#pragma once
#include <string>

namespace kb {

class OpName {
 public:
  constexpr explicit OpName(const char* name) : name_(name) {}
  constexpr const char* c_str() const { return name_; }
  operator std::string() const { return name_; }

 private:
  const char* name_;
};

}  // namespace kb

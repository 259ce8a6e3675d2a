// Errors inside the core: one exception type carrying a kb_status code.
#pragma once
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kb {

// Mirrors kb_status in include/kbackend.h (kept numerically identical).
enum class Status : int32_t {
  ok = 0,
  invalid_argument = 1,
  shape = 2,
  dtype = 3,
  not_implemented = 4,
  out_of_memory = 5,
  device = 6,
  internal = 7,
  unavailable = 8,  // a part the call needs is not there (the MPI plugin, its library)
  distributed = 9,  // a collective did not complete: a deadline, ranks that differ, a failure
  not_found = 10,   // a file the call reads does not exist
  io = 11,          // a file cannot be read or written
};

class Error : public std::runtime_error {
 public:
  Error(Status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Status code() const { return code_; }

 private:
  Status code_;
};

namespace detail {
inline void append(std::ostringstream&) {}
template <class T, class... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
}  // namespace detail

template <class... Parts>
[[noreturn]] void fail(Status code, const Parts&... parts) {
  std::ostringstream os;
  detail::append(os, parts...);
  throw Error(code, os.str());
}

template <class... Parts>
void check(bool ok, Status code, const Parts&... parts) {
  if (!ok) fail(code, parts...);
}

}  // namespace kb

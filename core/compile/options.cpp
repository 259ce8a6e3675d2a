// The compiler's options from the environment (core/compile/options.h).
#include "core/compile/options.h"

#include <cstdlib>
#include <string>

namespace kb {

namespace {
bool is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}
}  // namespace

CompileOptions CompileOptions::from_environment() {
  CompileOptions o;
  o.fuse = !is("KB_FUSE", "0");
  o.arena = !is("KB_ARENA", "0");
  o.fallback_is_error = is("KB_DEVICE_FALLBACK", "error");
  const char* log = std::getenv("KB_LOG_PLAN");
  o.log_plan = log ? std::atoi(log) : 0;
  if (const char* b = std::getenv("KB_BUCKET_BYTES"); b && *b) {
    char* end = nullptr;
    long long v = std::strtoll(b, &end, 10);
    if (end && *end == '\0' && v >= 0) o.bucket_bytes = v;
  }
  return o;
}

}  // namespace kb

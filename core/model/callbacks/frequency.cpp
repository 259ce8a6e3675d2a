#include "core/model/callbacks/frequency.h"

#include "core/util/error.h"

namespace kb::model {

int64_t batch_frequency(const Json& value, const char* key, bool batch_word,
                        const std::string& where) {
  if (value.is_string()) {
    std::string f = value.get<std::string>();
    if (f == "epoch") return 0;
    if (batch_word && f == "batch") return 1;
    fail(Status::invalid_argument, where, ": ", key, " '", f, "' is not ",
         batch_word ? "'epoch', 'batch'" : "'epoch'", " or a number of batches");
  }
  int64_t n = value.get<int64_t>();
  check(n > 0, Status::invalid_argument, where, ": ", key, " must be positive");
  return n;
}

}  // namespace kb::model

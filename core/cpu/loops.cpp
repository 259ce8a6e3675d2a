#include "core/cpu/loops.h"

#include <omp.h>

namespace kb::cpu {

int64_t omp_max_threads() { return omp_get_max_threads(); }

SerialScope::SerialScope(bool serial) {
  if (!serial) return;
  saved_ = omp_get_max_threads();
  if (saved_ > 1)
    omp_set_num_threads(1);
  else
    saved_ = 0;
}

SerialScope::~SerialScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

}  // namespace kb::cpu

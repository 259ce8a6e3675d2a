// Reading and writing one scalar of any dtype through a double.
#pragma once
#include "core/graph/dtype.h"

namespace kb {
void write_scalar(DType t, void* p, double v);
double read_scalar(DType t, const void* p);
}  // namespace kb

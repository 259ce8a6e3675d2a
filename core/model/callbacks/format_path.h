// Python's str.format over a checkpoint's filepath, as Keras' ModelCheckpoint formats it:
// "{name}" and "{name:spec}" fields (a format spec of Python's mini-language: fill, align,
// sign, #, 0, width, precision and the types d x X o b e E f F g G % or none), "{{" and "}}"
// for braces.
#pragma once
#include <string>

#include "core/model/json.h"

namespace kb::model {

// `pattern` with each field replaced by the value of its name in `values` (an integer or a
// number); a name `values` lacks, a spec Python refuses for the value (d for a float) or one
// outside the subset above fails with Status::invalid_argument, naming `where`.
std::string format_path(const std::string& pattern, const Json& values, const std::string& where);

// Python's repr of a float: the shortest digits that read back as the same double.
std::string python_float_repr(double v);

}  // namespace kb::model

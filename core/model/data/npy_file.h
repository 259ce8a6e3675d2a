// NumPy's .npy files (format versions 1.0, 2.0 and 3.0): one array, read whole or mapped from
// the file, so that fit, evaluate and predict go over data larger than memory (their batches
// read only the rows they take), and written as NumPy writes them. A file is untrusted input:
// its header is bounded and its shape checked against the file's size before anything is
// allocated or mapped.
#pragma once
#include <memory>
#include <string>

#include "core/graph/buffer.h"

namespace kb::model {

// The array of the .npy file at `path`. mapped: the file's pages back the buffer (copy on
// write: writes never reach the file), which needs little-endian, C-ordered data; else it is
// read, big-endian data swapped and Fortran order transposed. A file that does not exist fails
// with Status::not_found, one that cannot be read with Status::io, one that is not a .npy file
// of a supported dtype with Status::invalid_argument naming the file and the problem.
std::shared_ptr<Buffer> read_npy(const std::string& path, bool mapped);

// Writes `value` (host memory) as a version 1.0 .npy file, as numpy.save does; bfloat16, which
// NumPy has no type for, is refused.
void write_npy(const Buffer& value, const std::string& path);

}  // namespace kb::model

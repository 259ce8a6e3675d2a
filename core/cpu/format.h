// Renders a value as NumPy prints it (for print_tensor).
#pragma once
#include <string>

#include "core/graph/buffer.h"

namespace kb::cpu {
std::string format_buffer(const Buffer& b);
}

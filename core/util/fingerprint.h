// A 64-bit fingerprint of text that processes compare with each other (FNV-1a): the same on
// every process and build, unlike std::hash.
#pragma once
#include <cstdint>
#include <string>

namespace kb {

inline uint64_t fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace kb

#include "core/backend/kernel.h"

#include <map>

namespace kb {

namespace {
std::map<std::pair<std::string, std::string>, KernelFactory>& kernels() {
  static std::map<std::pair<std::string, std::string>, KernelFactory> k;
  return k;
}
}  // namespace

void register_kernel(const std::string& device, const std::string& op, KernelFactory f) {
  kernels()[{device, op}] = f;
}

KernelFactory find_kernel(const std::string& device, const std::string& op) {
  auto it = kernels().find({device, op});
  return it == kernels().end() ? nullptr : it->second;
}

}  // namespace kb

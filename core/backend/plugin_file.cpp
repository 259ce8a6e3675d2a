#include "core/backend/plugin_file.h"

#include <dlfcn.h>

#include <cstdlib>

namespace kb {

std::string plugin_file(const char* env_var, const char* file_name, bool* named) {
  const char* env = std::getenv(env_var);
  *named = env && *env;
  if (*named) return env;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&plugin_file), &info) || !info.dli_fname) return "";
  std::string dir = info.dli_fname;
  auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/" + file_name;
}

}  // namespace kb

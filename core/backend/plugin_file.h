// Where a plugin module is: the file the environment variable names, else `file_name` in the
// folder of the core library itself (wherever it was copied: a wheel, a jar, /usr/lib).
#pragma once
#include <string>

namespace kb {

// *named: whether the variable named it. "" when the core library cannot be located.
std::string plugin_file(const char* env_var, const char* file_name, bool* named);

}  // namespace kb

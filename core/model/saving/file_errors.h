// The failures of a model file's readers, each naming the file: a file is untrusted input, and a
// message that names neither the file nor the thing in it leaves the user guessing.
#pragma once
#include <string>

#include "core/model/json.h"
#include "core/util/error.h"

namespace kb::model {

// Runs `read` (a reader of the file at `path`): a failure whose message does not name the file
// gets "path: " before it, and a config value of the wrong JSON type (nlohmann's exceptions) is
// the file's fault (invalid_argument), not the library's.
template <class F>
auto naming_file(const std::string& path, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error& e) {
    if (std::string(e.what()).find(path) != std::string::npos) throw;
    throw Error(e.code(), path + ": " + e.what());
  } catch (const Json::exception& e) {
    throw Error(Status::invalid_argument,
                path + ": a config value of the wrong type (" + e.what() + ")");
  }
}

}  // namespace kb::model

#include "core/model/callbacks/event_file.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "core/backend/plugin_file.h"
#include "core/model/callbacks/tensorboard_plugin.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecords checksum their parts.
uint32_t crc32c(const void* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// TFRecord's masking of a CRC stored next to the data it covers.
uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

tensorboard::EventFn load_plugin(const std::string& who) {
  static std::mutex mu;
  static tensorboard::EventFn fn = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (fn) return fn;
  bool named = false;
  std::string path = plugin_file("KB_TENSORBOARD_PLUGIN", "libkbackend_tensorboard.so", &named);
  check(!path.empty(), Status::unavailable, who, ": cannot locate the core library");
  check(access(path.c_str(), R_OK) == 0 || !named, Status::unavailable, who,
        ": KB_TENSORBOARD_PLUGIN names ", path, ", which cannot be read");
  check(access(path.c_str(), R_OK) == 0, Status::unavailable, who, ": the TensorBoard plugin ",
        path, " is not there (the library was built without protobuf: install Debian's ",
        "libprotobuf-dev and protobuf-compiler and rebuild)");
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    fail(Status::unavailable, who, ": the TensorBoard plugin did not load (is libprotobuf ",
         "installed?): ", path, ": ", e ? e : "");
  }
  fn = reinterpret_cast<tensorboard::EventFn>(dlsym(h, tensorboard::kEventSymbol));
  check(fn != nullptr, Status::unavailable, who, ": ", path, " has no ", tensorboard::kEventSymbol);
  return fn;
}

double wall_time() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

EventFile::EventFile(const std::string& folder, const std::string& who) : who_(who) {
  load_plugin(who);  // before any file is made
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  check(std::filesystem::is_directory(folder, ec), Status::io, who, ": cannot create ", folder);
  // TensorFlow's name, with a counter so that two files of one second and process differ.
  static std::atomic<int> made{0};
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  path_ = (std::filesystem::path(folder) /
           ("events.out.tfevents." + std::to_string(int64_t(wall_time())) + "." + host + "." +
            std::to_string(getpid()) + "." + std::to_string(made++) + ".v2"))
              .string();
  file_ = std::fopen(path_.c_str(), "wb");
  check(file_ != nullptr, Status::io, who, ": cannot create ", path_, ": ", std::strerror(errno));
  write_event(0, "brain.Event:2", {});
}

EventFile::~EventFile() {
  if (file_) std::fclose(file_);
}

void EventFile::scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  if (!values.empty()) write_event(step, nullptr, values);
}

void EventFile::write_event(int64_t step, const char* file_version,
                            const std::vector<std::pair<std::string, double>>& values) {
  std::vector<tensorboard::ScalarDesc> scalars;
  for (const auto& [tag, v] : values) scalars.push_back({tag.c_str(), float(v)});
  tensorboard::EventDesc e{wall_time(), step, file_version, scalars.data(), scalars.size()};
  tensorboard::EventFn fn = load_plugin(who_);
  std::vector<char> bytes(256);
  char reason[256] = {0};
  size_t size = 0;
  int32_t r = fn(&e, bytes.data(), bytes.size(), &size, reason, sizeof reason);
  if (r == 1) {
    bytes.resize(size);
    r = fn(&e, bytes.data(), bytes.size(), &size, reason, sizeof reason);
  }
  check(r == 0, Status::internal, who_, ": the TensorBoard plugin failed: ", reason);
  record(bytes.data(), size);
}

void EventFile::record(const void* event, size_t size) {
  uint64_t length = size;  // little-endian on every machine the library builds for
  uint32_t length_crc = masked(crc32c(&length, sizeof length));
  uint32_t data_crc = masked(crc32c(event, size));
  bool ok = std::fwrite(&length, sizeof length, 1, file_) == 1 &&
            std::fwrite(&length_crc, sizeof length_crc, 1, file_) == 1 &&
            (size == 0 || std::fwrite(event, size, 1, file_) == 1) &&
            std::fwrite(&data_crc, sizeof data_crc, 1, file_) == 1 && std::fflush(file_) == 0;
  check(ok, Status::io, who_, ": cannot write ", path_, ": ", std::strerror(errno));
}

}  // namespace kb::model

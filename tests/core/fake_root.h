// A temporary folder standing for the file system's root, for code that reads /proc and /sys
// under a root prefix (core/backend/cpu_limits.h, cpu_load.h). Removed with the object.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kbt {

class FakeRoot {
 public:
  FakeRoot() {
    char tmpl[] = "/tmp/kb_fake_root_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~FakeRoot() { std::filesystem::remove_all(dir_); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  // Writes `text` to the root's `path` ("/proc/stat"), making its folders.
  void write(const std::string& path, const std::string& text) {
    std::filesystem::path p = dir_ + path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // A cgroup v1 cpu folder's quota and period (microseconds).
  void write_cfs(const std::string& folder, const std::string& quota, const std::string& period) {
    write(folder + "/cpu.cfs_quota_us", quota + "\n");
    write(folder + "/cpu.cfs_period_us", period + "\n");
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace kbt

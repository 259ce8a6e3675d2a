// A TensorBoard event file (events.out.tfevents.<time>.<host>.<pid>.<n>.v2 in a folder, as
// TensorFlow 2's summary writer names it): TFRecords (length, masked CRC-32C of the length,
// the Event's bytes, their masked CRC-32C), the first a file_version event. The Event's bytes
// come from the TensorBoard plugin (tensorboard_plugin.h), loaded on first use.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kb::model {

class EventFile {
 public:
  // A new file in `folder` (made if missing); `who` names the callback in messages.
  EventFile(const std::string& folder, const std::string& who);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  // A summary of scalars (tag, value) at `step`, flushed to the file.
  void scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values);
  const std::string& path() const { return path_; }

 private:
  void record(const void* event, size_t size);
  void write_event(int64_t step, const char* file_version,
                   const std::vector<std::pair<std::string, double>>& values);

  std::string who_, path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kb::model

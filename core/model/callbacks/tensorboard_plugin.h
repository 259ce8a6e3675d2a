// What crosses between the TensorBoard callback and its event writer
// (libkbackend_tensorboard.so, core/tensorboard): the plugin turns an event into the protobuf
// bytes of TensorBoard's Event message; the core frames them as TFRecords and writes the file.
// The core never links protobuf. Plain C types only, as for the other plugins.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kb::tensorboard {

struct ScalarDesc {
  const char* tag;
  float value;  // a scalar summary is float32, as tf.summary.scalar writes it
};

// An event at wall_time (seconds since the Unix epoch) and step: a file_version event when
// file_version != NULL, else a summary of the scalars.
struct EventDesc {
  double wall_time;
  int64_t step;
  const char* file_version;
  const ScalarDesc* scalars;
  size_t n_scalars;
};

// The plugin's one function (extern "C" kb_tensorboard_plugin_event): the event's bytes into
// out (capacity bytes), their count into *size. Returns 0; 1 when capacity is too small (*size:
// the bytes needed); 2 for another failure, with a NUL-terminated reason.
using EventFn = int32_t (*)(const EventDesc* event, char* out, size_t capacity, size_t* size,
                            char* reason, size_t reason_size);
constexpr const char* kEventSymbol = "kb_tensorboard_plugin_event";

}  // namespace kb::tensorboard

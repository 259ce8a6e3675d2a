// libkbackend_tensorboard.so: an event of the TensorBoard callback
// (core/model/callbacks/tensorboard_plugin.h) as the protobuf bytes of TensorBoard's Event
// (events.proto, Debian's libprotobuf). Scalars are written as TensorFlow 2 writes them: a
// float32 tensor of shape [] with the scalars plugin's metadata.
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "core/model/callbacks/tensorboard_plugin.h"
#include "events.pb.h"

namespace {

using namespace kb::tensorboard;

void say(char* reason, size_t size, const std::string& text) {
  if (!reason || size == 0) return;
  size_t n = std::min(size - 1, text.size());
  std::memcpy(reason, text.data(), n);
  reason[n] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t kb_tensorboard_plugin_event(
    const EventDesc* e, char* out, size_t capacity, size_t* size, char* reason,
    size_t reason_size) {
  try {
    ::kb::tensorboard::Event event;
    event.set_wall_time(e->wall_time);
    event.set_step(e->step);
    if (e->file_version) {
      event.set_file_version(e->file_version);
    } else {
      ::kb::tensorboard::Summary* summary = event.mutable_summary();
      for (size_t i = 0; i < e->n_scalars; ++i) {
        auto* v = summary->add_value();
        v->set_tag(e->scalars[i].tag);
        v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("scalars");
        v->mutable_metadata()->set_data_class(1);
        auto* t = v->mutable_tensor();
        t->set_dtype(1);
        t->mutable_tensor_shape();
        t->add_float_val(e->scalars[i].value);
      }
    }
    size_t n = event.ByteSizeLong();
    *size = n;
    if (n > capacity) return 1;
    if (!event.SerializeToArray(out, int(n))) {
      say(reason, reason_size, "the event does not serialize");
      return 2;
    }
    return 0;
  } catch (const std::exception& ex) {
    say(reason, reason_size, ex.what());
    return 2;
  } catch (...) {
    say(reason, reason_size, "an exception of unknown type");
    return 2;
  }
}

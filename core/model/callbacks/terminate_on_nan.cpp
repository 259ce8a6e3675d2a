// Keras 3's TerminateOnNaN: training stops (or, with raise_error, fails) after a batch whose
// loss is NaN or infinite.
#include <cmath>
#include <cstdio>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/format_path.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class TerminateOnNaN : public Callback {
 public:
  TerminateOnNaN(const Json& c, const std::string& where)
      : where_(where), raise_error_(c["raise_error"].get<bool>()) {}

  void on_train_batch_end(FitContext& fit, int64_t, int64_t batch, Json& logs) override {
    if (!logs.contains("loss") || !logs["loss"].is_number()) return;
    double loss = logs["loss"].get<double>();
    if (std::isfinite(loss)) return;
    check(!raise_error_, Status::invalid_argument, where_,
          ": NaN or Inf loss encountered at batch ", batch,
          ". Loss value: ", python_float_repr(loss), ". Terminating training immediately.");
    std::fprintf(stderr, "Batch %lld: Invalid loss, terminating training\n", (long long)batch);
    fit.stop_training = true;
  }

 private:
  std::string where_;
  bool raise_error_;
};

}  // namespace

std::shared_ptr<Callback> make_terminate_on_nan(const Json& config, const std::string& where) {
  return std::make_shared<TerminateOnNaN>(config, where);
}

}  // namespace kb::model

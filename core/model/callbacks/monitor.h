// What Keras 3's MonitorCallback does for EarlyStopping, ModelCheckpoint and ReduceLROnPlateau:
// which way the monitored value improves (mode, or in "auto" mode its name) and whether a value
// improves on a reference by more than min_delta.
#pragma once
#include <optional>
#include <string>

#include "core/model/json.h"

namespace kb::model {

class Monitor {
 public:
  // config's monitor, mode and min_delta (min_delta's absolute value, as Keras takes it).
  Monitor(const Json& config, const char* class_name, const std::string& where);
  const std::string& name() const { return name_; }
  // The monitored value in logs, if they hold a number of that name.
  std::optional<double> value(const Json& logs) const;
  // Keras' _set_monitor_op, which each epoch's end calls first: the direction, decided once
  // (auto: "loss" and the losses' names fall, the accuracies and other scores rise; a name of
  // neither kind fails, as Keras 3 raises, naming where and the class).
  void decide();
  // Keras' _is_improvement: true against no reference.
  bool improves(double value, std::optional<double> reference);
  // Keras' warning that the value is not in the logs, on stderr the first time only.
  void warn_missing(const Json& logs, const char* what);

 private:
  std::string name_, mode_, class_name_, where_;
  double min_delta_ = 0;
  int direction_ = 0;  // -1 lower is better, +1 higher, 0 not decided yet
  bool warned_ = false;
};

}  // namespace kb::model

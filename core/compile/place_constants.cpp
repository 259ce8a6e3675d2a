// The pass that places constants (core/compile/passes.h): those read by device steps are copied
// there once, when the plan is made.
#include <vector>

#include "core/backend/device.h"
#include "core/compile/passes.h"

namespace kb {

void place_constants(Plan& plan) {
  if (plan.device != Device::cpu) {
    std::vector<bool> on_device(size_t(plan.num_slots), false);
    for (auto& st : plan.steps)
      if (st.device == plan.device)
        for (int s : st.in) on_device[s] = true;
    for (auto& [s, b] : plan.constants)
      if (on_device[s]) b = transfer(b, plan.device);
  }
}

}  // namespace kb

// The pass that shows a plan (core/compile/passes.h): KB_LOG_PLAN=1 lists the steps and where
// each runs (to spot CPU fallbacks on a GPU); 2 adds each step's output shape and the ops of the
// nodes it reads; 3 lists one step per line with the slots it reads and writes (inputs, variables
// and constants first).
#include <cstdio>
#include <string>

#include "core/backend/device.h"
#include "core/compile/passes.h"
#include "core/ops/op.h"

namespace kb {

void log_plan(const Plan& plan, int level) {
  if (level >= 3) {
    std::string text = "kbackend plan (" + std::string(device_name(plan.device)) + "):\n  inputs";
    for (auto& [idx, slot] : plan.inputs)
      text += " s" + std::to_string(slot) + "=#" + std::to_string(idx);
    text += "\n  variables";
    for (auto& [var, slot] : plan.variables) text += " s" + std::to_string(slot);
    text += "\n  constants";
    for (auto& [slot, b] : plan.constants) text += " s" + std::to_string(slot);
    for (auto& st : plan.steps) {
      text += "\n  s" + std::to_string(st.out) + " = " + st.node->op->name + "(";
      for (size_t i = 0; i < st.in.size(); ++i)
        text += (i ? ", s" : "s") + std::to_string(st.in[i]);
      text += ") " + dims_str(st.out_type.shape.dims);
    }
    text += "\n  outputs";
    for (int slot : plan.outputs) text += " s" + std::to_string(slot);
    std::fprintf(stderr, "%s\n", text.c_str());
  } else if (level > 0) {
    std::string text = "kbackend plan (" + std::string(device_name(plan.device)) + "):";
    for (auto& st : plan.steps) {
      text += " " + st.node->op->name + "@" + device_name(st.device);
      if (level < 2) continue;
      text += dims_str(st.out_type.shape.dims) + "<-";
      for (auto& c : st.node->inputs) text += c->op->name + ",";
    }
    std::fprintf(stderr, "%s\n", text.c_str());
  }
}

}  // namespace kb

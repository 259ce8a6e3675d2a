#include <map>
#include <memory>
#include <mutex>

#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {
std::map<std::string, std::unique_ptr<OpDef>>& registry() {
  static std::map<std::string, std::unique_ptr<OpDef>> r;
  return r;
}

// The first registered name that core/ops/op_names.h does not list: code names ops by those
// constants only, so such a row is a defect that every lookup then reports (registration runs
// before main, where it cannot fail).
std::string& unlisted_op() {
  static std::string name;
  return name;
}

bool listed(const std::string& name) {
  for (const char* n : kAllOpNames)
    if (name == n) return true;
  return false;
}
}  // namespace

void register_op(const OpDef& def) {
  if (!listed(def.name) && unlisted_op().empty()) unlisted_op() = def.name;
  registry()[def.name] = std::make_unique<OpDef>(def);
}

const OpDef* find_op(const std::string& name) {
  if (!unlisted_op().empty())
    fail(Status::internal, "primitive '", unlisted_op(),
         "' is registered but has no constant in core/ops/op_names.h");
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

const OpDef& op(OpName name) { return op(std::string(name)); }

const OpDef& op(const std::string& name) {
  const OpDef* d = find_op(name);
  if (!d) fail(Status::internal, "unknown primitive '", name, "'");
  return *d;
}

}  // namespace kb

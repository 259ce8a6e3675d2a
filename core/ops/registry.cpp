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
}  // namespace

void register_op(const OpDef& def) { registry()[def.name] = std::make_unique<OpDef>(def); }

const OpDef* find_op(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

const OpDef& op(const std::string& name) {
  const OpDef* d = find_op(name);
  if (!d) fail(Status::internal, "unknown primitive '", name, "'");
  return *d;
}

bool Node::is(const char* op_name) const { return op && op->name == op_name; }

}  // namespace kb

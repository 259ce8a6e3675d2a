// CPU kernel of Switch: copies the chosen branch (only reached when the condition is not known at
// plan time; then both branches have the same concrete shape).
#include <cstring>

#include "core/backend/kernel.h"
#include "core/util/error.h"

namespace kb {
namespace {

Kernel make_switch(const KernelArgs& k) {
  check(k.in[1].shape.dims == k.in[2].shape.dims, Status::shape,
        "switch: the branches have shapes ", k.in[1].shape.str(), " and ", k.in[2].shape.str(),
        "; branches of different shapes need a condition known when the function is built");
  return [](const std::vector<const Buffer*>& in, Buffer& out) {
    const Buffer* src = *in[0]->as<bool>() ? in[1] : in[2];
    if (src->nbytes()) std::memcpy(out.data(), src->data(), src->nbytes());
  };
}
KernelRegistrar kr_switch("cpu", "Switch", make_switch);

}  // namespace
}  // namespace kb

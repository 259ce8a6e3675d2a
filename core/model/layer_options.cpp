#include "core/model/layer_options.h"

#include "core/graph/session.h"
#include "core/util/error.h"

namespace kb::model {

DataFormat data_format_of(const Json& config, const std::string& where) {
  auto f = opt_string(config, "data_format", where);
  if (!f) return Session::get().image_data_format();
  if (*f == "channels_last") return DataFormat::channels_last;
  check(*f == "channels_first", Status::invalid_argument, where, ": unknown data_format '", *f,
        "'");
  return DataFormat::channels_first;
}

api::Padding padding_of(const Json& config, const std::string& where) {
  std::string p = string_or(config, "padding", "valid", where);
  if (p == "valid") return api::Padding::valid;
  if (p == "same") return api::Padding::same;
  check(p == "causal", Status::invalid_argument, where, ": unknown padding '", p, "'");
  return api::Padding::causal;
}

NodePtr convolution(const NodePtr& x, const NodePtr& kernel, const Dims& strides,
                    api::Padding padding, DataFormat format, const Dims& dilation) {
  if (strides.size() == 1) return api::conv1d(x, kernel, strides[0], padding, format, dilation[0]);
  if (strides.size() == 2) return api::conv2d(x, kernel, strides, padding, format, dilation);
  return api::conv3d(x, kernel, strides, padding, format, dilation);
}

}  // namespace kb::model

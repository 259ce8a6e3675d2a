#include "core/model/summary.h"

#include <sstream>

namespace kb::model {
namespace {

std::string shape_text(const std::vector<Shape>& shapes) {
  std::string out;
  for (const auto& s : shapes) {
    std::string one = "(";
    for (size_t i = 0; i < s.dims.size(); ++i) {
      if (i) one += ", ";
      one += s.dims[i] < 0 ? "None" : std::to_string(s.dims[i]);
    }
    if (s.dims.size() == 1) one += ",";
    one += ")";
    out += (out.empty() ? "" : ", ") + one;
  }
  return shapes.size() > 1 ? "[" + out + "]" : out;
}

// 1234567 -> "1,234,567" (Keras formats the totals with thousands separators).
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string row(const std::vector<std::string>& fields, const std::vector<size_t>& ends) {
  // keras.utils.print_summary's print_row, trailing spaces and all.
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0 && !line.empty()) line.back() = ' ';
    line += fields[i];
    line.resize(ends[i], ' ');
  }
  return line + "\n";
}

}  // namespace

std::string summary(const Model& model) {
  // keras.utils.print_summary for sequential-like models: 65 columns at .45/.85/1.
  const std::vector<size_t> ends{29, 55, 65};
  std::ostringstream os;
  os << "_________________________________________________________________\n";
  os << row({"Layer (type)", "Output Shape", "Param #"}, ends);
  os << "=================================================================\n";
  int64_t trainable = 0, total = 0;
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const auto& l = *model.layers()[i];
    int64_t params = 0;
    for (const auto& w : l.weights()) {
      int64_t n = w.variable->shape().numel();
      params += n;
      if (w.trainable) trainable += n;
    }
    total += params;
    os << row({l.name() + " (" + l.class_name() + ")", shape_text(l.output_shapes()),
               std::to_string(params)},
              ends);
    os << (i + 1 < model.layers().size()
               ? "_________________________________________________________________\n"
               : "=================================================================\n");
  }
  os << "Total params: " << grouped(total) << "\n";
  os << "Trainable params: " << grouped(trainable) << "\n";
  os << "Non-trainable params: " << grouped(total - trainable) << "\n";
  os << "_________________________________________________________________\n";
  return os.str();
}

}  // namespace kb::model

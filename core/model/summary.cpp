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
  // keras.utils.print_summary: 65 columns at .45/.85/1 for Sequential-like models, else 98 at
  // .33/.55/.67/1 with the layers each one is connected to.
  bool chain = model.class_name() == "Sequential" || model.sequential_like();
  const size_t width = chain ? 65 : 98;
  const std::vector<size_t> ends =
      chain ? std::vector<size_t>{29, 55, 65} : std::vector<size_t>{32, 53, 65, 98};
  const std::string thin(width, '_'), thick(width, '=');
  std::ostringstream os;
  os << thin << "\n";
  std::vector<std::string> header{"Layer (type)", "Output Shape", "Param #"};
  if (!chain) header.push_back("Connected to");
  os << row(header, ends) << thick << "\n";
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
    std::vector<std::string> fields{l.name() + " (" + l.class_name() + ")",
                                    shape_text(l.output_shapes()), std::to_string(params)};
    const std::vector<std::string> none;
    const auto& links = i < model.connections().size() ? model.connections()[i] : none;
    if (!chain) fields.push_back(links.empty() ? "" : links[0]);
    os << row(fields, ends);
    for (size_t k = 1; !chain && k < links.size(); ++k) os << row({"", "", "", links[k]}, ends);
    os << (i + 1 < model.layers().size() ? thin : thick) << "\n";
  }
  os << "Total params: " << grouped(total) << "\n";
  os << "Trainable params: " << grouped(trainable) << "\n";
  os << "Non-trainable params: " << grouped(total - trainable) << "\n";
  os << thin << "\n";
  return os.str();
}

}  // namespace kb::model

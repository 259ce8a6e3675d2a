// Keras 3's CSVLogger: a row per epoch (the epoch from 0, then the logged values under the
// sorted names of the first epoch's logs, "NA" where one is missing), written and flushed at
// each epoch's end as Python's csv module writes it (values as repr, rows ending in \r\n).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/format_path.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class CSVLogger : public Callback {
 public:
  bool writes_files() const override { return true; }
  CSVLogger(const Json& c, const std::string& where)
      : where_(where),
        filename_(c["filename"].get<std::string>()),
        separator_(c["separator"].get<std::string>()),
        append_(c["append"].get<bool>()) {
    check(separator_.size() == 1, Status::invalid_argument, where,
          ": the separator must be one character, not \"", separator_, "\"");
  }

  void on_train_begin(FitContext&) override {
    append_header_ = true;
    if (append_) {  // a header only for an empty (or new) file
      std::ifstream existing(filename_, std::ios::binary);
      append_header_ = !existing || existing.peek() == std::ifstream::traits_type::eof();
    }
    file_ = std::make_unique<std::ofstream>(
        filename_, std::ios::binary | (append_ ? std::ios::app : std::ios::trunc));
    check(file_->is_open(), Status::io, where_, ": cannot open ", filename_, " for writing");
    keys_.clear();
    started_ = false;
  }

  void on_epoch_end(FitContext&, int64_t epoch, Json& logs) override {
    if (!file_) return;
    if (!started_) {
      for (auto it = logs.begin(); it != logs.end(); ++it) keys_.push_back(it.key());
      std::sort(keys_.begin(), keys_.end());
      // Keras adds val_ columns when the first epoch has none (they stay NA).
      bool validated = std::any_of(keys_.begin(), keys_.end(),
                                   [](const std::string& k) { return k.rfind("val_", 0) == 0; });
      if (!validated && !keys_.empty()) {
        size_t n = keys_.size();
        for (size_t i = 0; i < n; ++i) keys_.push_back("val_" + keys_[i]);
      }
      if (append_header_) {
        std::vector<std::string> header{"epoch"};
        header.insert(header.end(), keys_.begin(), keys_.end());
        write_row(header);
      }
      started_ = true;
    }
    std::vector<std::string> row{std::to_string(epoch)};
    for (const auto& k : keys_) {
      if (!logs.contains(k) || logs[k].is_null())
        row.push_back("NA");
      else if (logs[k].is_number_integer())
        row.push_back(std::to_string(logs[k].get<long long>()));
      else if (logs[k].is_number())
        row.push_back(python_float_repr(logs[k].get<double>()));
      else
        row.push_back(logs[k].is_string() ? logs[k].get<std::string>() : logs[k].dump());
    }
    write_row(row);
    file_->flush();
    check(bool(*file_), Status::io, where_, ": cannot write to ", filename_);
  }

  void on_train_end(FitContext&) override { file_.reset(); }

 private:
  // A field holding the separator, a quote or a line break is quoted, its quotes doubled
  // (csv.QUOTE_MINIMAL).
  void write_row(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      if (i) line += separator_;
      if (f.find_first_of(separator_ + "\"\r\n") == std::string::npos) {
        line += f;
        continue;
      }
      line += '"';
      for (char ch : f) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      line += '"';
    }
    *file_ << line << "\r\n";
  }

  std::string where_, filename_, separator_;
  bool append_, append_header_ = true, started_ = false;
  std::unique_ptr<std::ofstream> file_;
  std::vector<std::string> keys_;
};

}  // namespace

std::shared_ptr<Callback> make_csv_logger(const Json& config, const std::string& where) {
  return std::make_shared<CSVLogger>(config, where);
}

}  // namespace kb::model

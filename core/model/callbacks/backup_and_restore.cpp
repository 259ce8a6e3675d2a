// Keras 3's BackupAndRestore: at each epoch's end (or every save_freq batches) the weights with
// the optimizer's state go to backup_dir/latest.weights.h5 and the epoch reached to
// training_metadata.json; a fit that finds them loads the weights and starts at that epoch, so
// that a job killed and started again resumes where it stopped. A finished fit deletes them.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/frequency.h"
#include "core/model/model_file.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

namespace fs = std::filesystem;

// A metadata file holds two small integers; anything longer is not one.
constexpr std::streamsize kMaxMetadataBytes = 4096;

class BackupAndRestore : public Callback {
 public:
  bool writes_files() const override { return true; }
  BackupAndRestore(const Json& c, const std::string& where)
      : where_(where),
        dir_(c["backup_dir"].get<std::string>()),
        double_checkpoint_(c["double_checkpoint"].get<bool>()),
        delete_checkpoint_(c["delete_checkpoint"].get<bool>()) {
    check(!dir_.empty(), Status::invalid_argument, where, ": an empty backup_dir");
    save_freq_ = batch_frequency(c["save_freq"], "save_freq", false, where);
    weights_ = (fs::path(dir_) / "latest.weights.h5").string();
    metadata_ = (fs::path(dir_) / "training_metadata.json").string();
  }

  void on_train_begin(FitContext& fit) override {
    try {
      load(fit);
    } catch (const Error&) {
      // A damaged backup: the one before it, when double_checkpoint kept it.
      std::error_code ec;
      if (!fs::exists(weights_ + ".bkp", ec)) throw;
      fs::copy_file(weights_ + ".bkp", weights_, fs::copy_options::overwrite_existing, ec);
      if (fs::exists(metadata_ + ".bkp", ec))
        fs::copy_file(metadata_ + ".bkp", metadata_, fs::copy_options::overwrite_existing, ec);
      else
        fs::remove(metadata_, ec);
      load(fit);
    }
  }

  void on_epoch_end(FitContext& fit, int64_t epoch, Json&) override {
    current_epoch_ = epoch + 1;
    last_batch_ = 0;
    if (save_freq_ == 0) save(fit);
  }

  void on_train_batch_end(FitContext& fit, int64_t, int64_t batch, Json&) override {
    if (save_freq_ == 0) return;
    seen_ += batch <= last_batch_ ? batch + 1 : batch - last_batch_;  // a new epoch: from 0
    last_batch_ = batch;
    if (seen_ < save_freq_) return;
    seen_ = 0;
    save(fit);
  }

  void on_train_end(FitContext&) override {
    std::error_code ec;
    if (delete_checkpoint_ && fs::exists(dir_, ec)) fs::remove_all(dir_, ec);
  }

 private:
  void load(FitContext& fit) {
    std::error_code ec;
    if (fs::exists(weights_, ec)) load_weights(fit.model, weights_, false);
    if (!fs::exists(metadata_, ec)) return;
    std::ifstream in(metadata_, std::ios::binary);
    check(bool(in), Status::io, where_, ": cannot read ", metadata_);
    std::string text(size_t(kMaxMetadataBytes) + 1, '\0');
    in.read(text.data(), kMaxMetadataBytes + 1);
    text.resize(size_t(in.gcount()));
    check(text.size() <= size_t(kMaxMetadataBytes), Status::invalid_argument, where_, ": ",
          metadata_, " is not a backup's metadata (too long)");
    Json meta = parse_json(text, metadata_);
    check(meta.is_object() && meta.contains("epoch") && meta["epoch"].is_number_integer() &&
              meta["epoch"].get<int64_t>() >= 0,
          Status::invalid_argument, where_, ": ", metadata_, " has no epoch");
    fit.initial_epoch = meta["epoch"].get<int64_t>();
    current_epoch_ = fit.initial_epoch;
  }

  void save(FitContext& fit) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    check(fs::is_directory(dir_, ec), Status::io, where_, ": cannot create ", dir_);
    if (double_checkpoint_ && fs::exists(weights_, ec))
      fs::copy_file(weights_, weights_ + ".bkp", fs::copy_options::overwrite_existing, ec);
    if (double_checkpoint_ && fs::exists(metadata_, ec))
      fs::copy_file(metadata_, metadata_ + ".bkp", fs::copy_options::overwrite_existing, ec);
    save_weights(fit.model, weights_);
    std::ofstream out(metadata_, std::ios::binary | std::ios::trunc);
    out << Json{{"epoch", current_epoch_}, {"batch", last_batch_}}.dump();
    out.close();
    check(bool(out), Status::io, where_, ": cannot write ", metadata_);
  }

  std::string where_, dir_, weights_, metadata_;
  bool double_checkpoint_, delete_checkpoint_;
  int64_t save_freq_ = 0;  // 0: each epoch
  int64_t seen_ = 0, last_batch_ = 0, current_epoch_ = 0;
};

}  // namespace

std::shared_ptr<Callback> make_backup_and_restore(const Json& config, const std::string& where) {
  return std::make_shared<BackupAndRestore>(config, where);
}

}  // namespace kb::model

// A fuzzer of the model readers. An input that starts with '{' is a model config: given to
// kb_model_from_json (Keras 2's form), and as the config.json of a `.keras` archive beside the
// weights of a committed Keras 3 archive (Keras 3's form, and the weights walked against it).
// Any other input is a model file given to kb_model_load: a `.keras` archive (zip), or, with
// KB_FUZZ_HDF5=1, an HDF5 file too. (Damaged HDF5 structure is parsed by libhdf5 itself, and
// Debian 12's libhdf5 1.10.8 has memory errors on damaged object headers that no check outside
// it can prevent; its strings and datasets, which the library reads, are checked.) After each
// load it checks the ABI's promises (the status is kb_last_error_code(); a failure has a
// message and leaves the model NULL) and runs what loaded: a prediction on zeros, and a save
// and a load of it again. A broken promise aborts, which the fuzzer reports; so do a crash, a
// sanitizer's report, a leak, a hang and an allocation past the fuzzer's limit (run.sh's
// -malloc_limit_mb).
//
// Built with libFuzzer it explores from the committed model files and configs; built without
// it, its main() runs the files or folders given once each (in ctest).
#include <kbackend.h>
#include <unistd.h>
#include <zip.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The weights of tests/model_files/keras3/mlp.keras, beside which a config is loaded as an
// archive's.
std::string g_weights;

// Inputs of a prediction stay below this many elements: the run is the readers', not the math's.
constexpr int64_t kMaxInputElements = 4096;

void promise(bool kept, const char* call, const char* what) {
  if (kept) return;
  std::fprintf(stderr, "ABI promise broken by %s: %s (last error %d: %s)\n", call, what,
               int(kb_last_error_code()), kb_last_error_message());
  std::abort();
}

// A status's promises: the last error's code, a message when it failed.
bool succeeded(kb_status s, const char* call) {
  promise(s == kb_last_error_code(), call, "the status is not kb_last_error_code()");
  if (s != KB_OK) promise(std::strlen(kb_last_error_message()) > 0, call, "no message");
  return s == KB_OK;
}

std::string temp_path(const char* suffix) {
  return "/tmp/kb_model_fuzzer_" + std::to_string(getpid()) + suffix;
}

bool write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

// A prediction on zeros of each input's shape (unknown dims 1), when they are small.
void predict_on_zeros(kb_model* m) {
  kb_tensor_list* inputs = nullptr;
  if (!succeeded(kb_model_inputs(m, &inputs), "model_inputs")) return;
  std::vector<kb_tensor*> xs;
  bool small = true;
  for (size_t i = 0; i < kb_tensor_list_size(inputs) && small; ++i) {
    kb_tensor* in = nullptr;
    if (!succeeded(kb_tensor_list_get(inputs, i, &in), "tensor_list_get")) break;
    int64_t dims[8] = {0};
    int64_t rank = 0;
    kb_data_type dtype = KB_FLOAT32;
    small = succeeded(kb_int_shape(in, dims, 8, &rank), "int_shape") &&
            succeeded(kb_dtype(in, &dtype), "dtype") && rank <= 8;
    kb_tensor_release(in);
    int64_t elements = 1;
    for (int64_t d = 0; d < rank && small; ++d) {
      if (dims[d] < 0) dims[d] = 1;
      small = dims[d] <= kMaxInputElements && (elements *= dims[d]) <= kMaxInputElements;
    }
    kb_tensor* x = nullptr;
    if (small && succeeded(kb_zeros(dims, size_t(rank), dtype, "x", &x), "zeros")) xs.push_back(x);
  }
  if (small && xs.size() == kb_tensor_list_size(inputs)) {
    kb_tensor_list* out = nullptr;
    if (succeeded(kb_model_predict(m, xs.data(), xs.size(), 8, 0, &out), "model_predict"))
      kb_tensor_list_release(out);
  }
  for (kb_tensor* x : xs) kb_tensor_release(x);
  kb_tensor_list_release(inputs);
}

// What loaded is used as a program would: a prediction, a save, a load of the saved file.
void exercise(kb_model* m) {
  predict_on_zeros(m);
  std::string saved = temp_path(".h5");
  if (succeeded(kb_model_save(m, saved.c_str(), 1), "model_save")) {
    kb_model* again = nullptr;
    bool loaded = succeeded(kb_model_load(saved.c_str(), 1, &again), "model_load");
    promise(loaded == (again != nullptr), "model_load", "the model is set only on success");
    kb_model_release(again);
  }
  std::remove(saved.c_str());
}

// Loads through `call` (kb_model_load or kb_model_from_json), checks the promises, and runs
// what loaded.
void load_and_exercise(const char* call, kb_status (*load)(const char*, int32_t, kb_model**),
                       const std::string& argument) {
  kb_model* m = nullptr;
  bool loaded = succeeded(load(argument.c_str(), 1, &m), call);
  promise(loaded == (m != nullptr), call, "the model is set only on success");
  if (loaded) exercise(m);
  kb_model_release(m);
}

kb_status from_json(const char* text, int32_t, kb_model** out) {
  return kb_model_from_json(text, out);
}

// An archive of `config` and g_weights at `path` (false when it cannot be written).
bool write_archive(const std::string& path, const std::string& config) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (z == nullptr) return false;
  bool ok = true;
  for (const auto& [name, bytes] :
       {std::pair<const char*, const std::string*>{"config.json", &config},
        {"model.weights.h5", &g_weights}}) {
    zip_source_t* src = zip_source_buffer(z, bytes->data(), bytes->size(), 0);
    if (src == nullptr || zip_file_add(z, name, src, ZIP_FL_OVERWRITE) < 0) {
      zip_source_free(src);
      ok = false;
    }
  }
  if (!ok || zip_close(z) != 0) {
    zip_discard(z);
    return false;
  }
  return true;
}

std::string read_entry(const std::string& archive, const char* name) {
  int error = 0;
  zip_t* z = zip_open(archive.c_str(), ZIP_RDONLY, &error);
  if (z == nullptr) return {};
  std::string out;
  zip_stat_t st;
  zip_file_t* f = zip_stat(z, name, 0, &st) == 0 ? zip_fopen(z, name, 0) : nullptr;
  if (f != nullptr) {
    out.resize(st.size);
    if (zip_fread(f, out.data(), st.size) != zip_int64_t(st.size)) out.clear();
    zip_fclose(f);
  }
  zip_discard(z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool hdf5 =
      std::getenv("KB_FUZZ_HDF5") && std::strcmp(std::getenv("KB_FUZZ_HDF5"), "1") == 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && data[0] == '{') {
    load_and_exercise("model_from_json", from_json, bytes.c_str());
    std::string archive = temp_path(".keras");
    if (write_archive(archive, bytes)) load_and_exercise("model_load", kb_model_load, archive);
    std::remove(archive.c_str());
    return 0;
  }
  if (!hdf5 && bytes.compare(0, 4, "\x89HDF") == 0) return 0;
  std::string path = temp_path(".model");
  if (write_file(path, data, size)) load_and_exercise("model_load", kb_model_load, path);
  std::remove(path.c_str());
  return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kb_set_print_sink([](const char*, void*) {}, nullptr);  // summaries and warnings are noise here
  g_weights = read_entry(KB_SOURCE_DIR "/tests/model_files/keras3/mlp.keras", "model.weights.h5");
  if (g_weights.empty()) {
    std::fprintf(stderr, "cannot read the weights of tests/model_files/keras3/mlp.keras\n");
    std::abort();
  }
  return 0;
}

#include "standalone_main.h"

// A fuzzer of the model readers: the input is a model file (a Keras 3 `.keras` archive, an HDF5
// file of Keras 2 or tf.keras) given to kb_model_load, or, when it starts with '{', a model
// config given to kb_model_from_json. After each load it checks the ABI's promises (the status
// is kb_last_error_code(); a failure has a message and leaves the model NULL) and runs what
// loaded: a prediction on zeros, and a save and a load of it again. A broken promise aborts,
// which the fuzzer reports; so do a crash, a sanitizer's report, a leak, a hang and an
// allocation past the fuzzer's limit (run.sh's -malloc_limit_mb).
//
// Built with libFuzzer it explores from the committed model files (tests/model_files); built
// without it, its main() runs the files or folders given once each (in ctest).
#include <kbackend.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kb_model* m = nullptr;
  const char* call = "model_load";
  kb_status s;
  if (size > 0 && data[0] == '{') {
    call = "model_from_json";
    std::string text(reinterpret_cast<const char*>(data), size);
    s = kb_model_from_json(text.c_str(), &m);
  } else {
    std::string path = temp_path(".model");
    if (!write_file(path, data, size)) return 0;
    s = kb_model_load(path.c_str(), 1, &m);
    std::remove(path.c_str());
  }
  bool loaded = succeeded(s, call);
  promise(loaded == (m != nullptr), call, "the model is set only on success");
  if (loaded) exercise(m);
  kb_model_release(m);
  return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kb_set_print_sink([](const char*, void*) {}, nullptr);  // summaries and warnings are noise here
  return 0;
}

#include "standalone_main.h"

// kb_model_export_onnx through the C ABI: a file ONNX's checker accepted (the plugin checks every
// graph before writing it), and the refusals. bindings/python/tests/test_onnx_export.py runs the
// files in ONNX Runtime against predict.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "capi/helpers.h"

using namespace kbt;

namespace {

struct Model {
  kb_model* m = nullptr;
  explicit Model(const std::string& file) {
    ok(kb_model_load((std::string(KB_SOURCE_DIR) + "/tests/model_files/keras3/" + file).c_str(), 0,
                     &m),
       "model_load");
  }
  Model(const char* json, int) { ok(kb_model_from_json(json, &m), "model_from_json"); }
  ~Model() { kb_model_release(m); }
};

std::string temp_path(const char* name) {
  return (testing::TempDir() + "/kb_onnx_" + std::to_string(getpid()) + "_" + name);
}

off_t file_size(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

}  // namespace

TEST(OnnxExport, WritesACheckedFile) {
  Model mlp("mlp.keras");
  std::string path = temp_path("mlp.onnx");
  ok(kb_model_export_onnx(mlp.m, path.c_str(), nullptr), "export_onnx");
  EXPECT_GT(file_size(path), 1000);  // the weights are in it
  std::string fixed = temp_path("mlp_b4.onnx");
  ok(kb_model_export_onnx(mlp.m, fixed.c_str(), R"({"batch_size": 4, "opset": 17})"),
     "export_onnx");
  EXPECT_GT(file_size(fixed), 1000);
  std::remove(path.c_str());
  std::remove(fixed.c_str());
}

TEST(OnnxExport, RefusesWhatItCannotWrite) {
  Model mlp("mlp.keras");
  std::string path = temp_path("refused.onnx");
  EXPECT_EQ(kb_model_export_onnx(mlp.m, path.c_str(), R"({"opset": 18})"),
            KB_ERROR_NOT_IMPLEMENTED);
  EXPECT_NE(std::string(kb_last_error_message()).find("opset 18"), std::string::npos);
  EXPECT_EQ(kb_model_export_onnx(mlp.m, path.c_str(), R"({"opsett": 17})"),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_model_export_onnx(mlp.m, path.c_str(), R"({"batch_size": -2})"),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_model_export_onnx(mlp.m, "/nonexistent-folder/m.onnx", nullptr), KB_ERROR_IO);
  EXPECT_EQ(kb_model_export_onnx(nullptr, path.c_str(), nullptr), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_model_export_onnx(mlp.m, nullptr, nullptr), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(file_size(path), -1);  // nothing written

  Model rnn("rnn.keras");  // a recurrent layer over a known length: unrolled
  ok(kb_model_export_onnx(rnn.m, path.c_str(), nullptr), "export_onnx");
  EXPECT_GT(file_size(path), 1000);
  std::remove(path.c_str());
  // Over sequences of unknown length a loop cannot be unrolled: refused, naming the layer.
  Model open_ended(
      R"({"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "LSTM",)"
      R"( "config": {"name": "lstm", "units": 2, "batch_input_shape": [null, null, 3]}}]}})",
      0);
  EXPECT_EQ(kb_model_export_onnx(open_ended.m, path.c_str(), nullptr), KB_ERROR_NOT_IMPLEMENTED);
  std::string msg = kb_last_error_message();
  EXPECT_NE(msg.find("layer 'lstm' (LSTM)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown length"), std::string::npos) << msg;
  EXPECT_EQ(file_size(path), -1);
}

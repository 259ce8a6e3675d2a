// kbackend::Model (include/kbackend_models.hpp): the C++ layer over kb_model_*.
#include <gtest/gtest.h>
#include <kbackend_models.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace {

namespace K = kbackend;

const char* kMlp =
    R"({"class_name": "Model", "config": {"name": "m", "layers": [)"
    R"({"name": "in", "class_name": "InputLayer", "config": {"name": "in", "batch_input_shape": [null, 4]}, "inbound_nodes": []},)"
    R"({"name": "h", "class_name": "Dense", "config": {"name": "h", "units": 8, "activation": "tanh"}, "inbound_nodes": [[["in", 0, 0, {}]]]},)"
    R"({"name": "out", "class_name": "Dense", "config": {"name": "out", "units": 2, "activation": "softmax"}, "inbound_nodes": [[["h", 0, 0, {}]]]}],)"
    R"( "input_layers": [["in", 0, 0]], "output_layers": [["out", 0, 0]]}})";

// Two classes: the sign of the first feature.
void data(K::Tensor& x, K::Tensor& y, int n) {
  std::vector<float> xv, yv;
  for (int i = 0; i < n; ++i) {
    float a = float((i * 37) % 17) / 8.5f - 1.0f;
    xv.insert(xv.end(), {a, float(i % 3), 0.5f, -a / 2});
    yv.insert(yv.end(), {a < 0 ? 1.0f : 0.0f, a < 0 ? 0.0f : 1.0f});
  }
  x = K::Tensor::from(xv, {n, 4});
  y = K::Tensor::from(yv, {n, 2});
}

// Keras' clone_model with each layer's dtype set: bfloat16 computation over float32 weights.
TEST(Models, AFloat32ModelComputesInBfloat16) {
  K::Model m = K::Model::from_json(kMlp);
  K::Tensor x, y;
  data(x, y, 4);
  K::Model mixed = m.with_dtype_policy("mixed_bfloat16");
  EXPECT_EQ(mixed.predict_on_batch({x})[0].dtype(), K::DType::bfloat16);
  EXPECT_EQ(mixed.weights()[0].dtype(), K::DType::float32);
  K::Model back = mixed.with_dtype_policy("float32");
  EXPECT_EQ(back.predict_on_batch({x})[0].to_vector<float>(),
            m.predict_on_batch({x})[0].to_vector<float>());
  EXPECT_THROW(m.with_dtype_policy("int8"), K::Error);
}

TEST(Models, FitEvaluatePredictSaveLoad) {
  K::Model m = K::Model::from_json(kMlp);
  EXPECT_EQ(m.layer_count(), 3u);
  EXPECT_EQ(m.layer_class(1), "Dense");
  m.compile("adam", {"categorical_crossentropy"}, {"accuracy"}, R"({"optimizer": {"lr": 0.05}})");
  EXPECT_EQ(m.metrics_names(), R"(["loss","acc"])");
  K::Tensor x, y;
  data(x, y, 64);
  K::FitOptions o;
  o.epochs = 30;
  o.verbose = 0;
  o.batch_size = 16;
  int epochs_seen = 0;
  o.callback = [&](int64_t, int64_t batch, const std::string&) {
    epochs_seen += batch == -1;
    return false;
  };
  std::vector<double> epoch_losses;
  o.logs_callback = [&](int64_t, int64_t batch, const K::Logs& logs) {
    if (batch == -1) epoch_losses.push_back(logs.at("loss"));
    return false;
  };
  K::History h = m.fit({x}, {y}, o);
  EXPECT_EQ(epochs_seen, 30);
  EXPECT_NE(h.json.find("\"acc\""), std::string::npos);
  // The history and the logs as values: one loss per epoch, the logs' at each epoch's end.
  ASSERT_EQ(h.values.at("loss").size(), 30u);
  EXPECT_EQ(h.values.at("loss"), epoch_losses);
  EXPECT_GT(h.values.at("acc").back(), 0.9);
  std::vector<double> scores = m.evaluate({x}, {y});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_GT(scores[1], 0.9);  // learns the sign
  std::vector<K::Tensor> p = m.predict({x});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].shape(), (std::vector<int64_t>{64, 2}));

  std::string path = ::testing::TempDir() + "kb_hpp_model_" + std::to_string(getpid()) + ".h5";
  m.save(path);
  K::Model again = K::Model::load(path);
  EXPECT_EQ(again.predict({x})[0].to_vector<float>(), p[0].to_vector<float>());
  EXPECT_EQ(again.train_on_batch({x}, {y}).size(), 2u);
  std::remove(path.c_str());
  EXPECT_EQ(m.weights().size(), 4u);
  EXPECT_EQ(K::model_count_params(m), 4 * 8 + 8 + 8 * 2 + 2);  // generated, not in Model

  K::FitOptions weighted;
  weighted.verbose = 0;
  weighted.epochs = 2;
  weighted.sample_weight = {K::Tensor::from(std::vector<float>(64, 1.0f), {64})};
  weighted.validation_x = {x};
  weighted.validation_y = {y};
  K::History vh = m.fit({x}, {y}, weighted);
  EXPECT_NE(vh.json.find("\"val_acc\""), std::string::npos);
  weighted.sample_weight = {K::Tensor::from(std::vector<float>(3, 1.0f), {3})};
  EXPECT_THROW(m.fit({x}, {y}, weighted), K::Error);
  EXPECT_EQ(m.inputs()[0].shape(), (std::vector<int64_t>{-1, 4}));
}

TEST(Models, ErrorsAndCallbackExceptions) {
  EXPECT_THROW(K::Model::load("/nonexistent.h5"), K::Error);
  EXPECT_THROW(K::Model::from_json("[]"), K::Error);
  K::Model m = K::Model::from_json(kMlp);
  K::Tensor x, y;
  data(x, y, 8);
  EXPECT_THROW(m.fit({x}, {y}), K::Error);  // not compiled
  m.compile("sgd", {"mse"});
  K::FitOptions o;
  o.verbose = 0;
  o.epochs = 3;
  o.callback = [](int64_t, int64_t, const std::string&) -> bool {
    throw std::logic_error("from the callback");
  };
  EXPECT_THROW(m.fit({x}, {y}, o), std::logic_error);
  o.callback = nullptr;
  EXPECT_NO_THROW(m.fit({x}, {y}, o));
}

// The library's logs and history as values: numbers, nulls (NaN) and lists of them.
// Keras 3's archive (a committed fixture Keras 3.15 saved): it loads by its content, predicts
// a probability per class, and saves again as an archive that loads with the same outputs.
TEST(Models, Keras3ArchiveLoadsAndSavesAgain) {
  K::Model m = K::Model::load(std::string(KB_SOURCE_DIR) + "/tests/model_files/keras3/mlp.keras");
  EXPECT_EQ(m.metrics_names(), R"(["loss","accuracy"])");
  std::vector<float> xv(4 * 8);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(i % 7) / 7.0f;
  K::Tensor x = K::Tensor::from(xv, {4, 8});
  std::vector<float> p = m.predict({x}, K::PredictArguments{})[0].to_vector<float>();
  ASSERT_EQ(p.size(), 12u);
  for (int r = 0; r < 4; ++r) EXPECT_NEAR(p[3 * r] + p[3 * r + 1] + p[3 * r + 2], 1.0f, 1e-5f);
  std::string path = ::testing::TempDir() + "kb_hpp_archive_" + std::to_string(getpid()) + ".keras";
  m.save(path, K::SaveArguments{});
  K::Model again = K::Model::load(path);
  EXPECT_EQ(again.predict({x})[0].to_vector<float>(), p);
  std::remove(path.c_str());
}

TEST(Models, LogsAsValues) {
  auto v =
      K::detail::NumbersJson(R"({"a": [1, null, 2.5e-3], "b": -3, "c": [], "d\"e": 1})").parse();
  ASSERT_EQ(v.at("a").size(), 3u);
  EXPECT_EQ(v.at("a")[0], 1.0);
  EXPECT_TRUE(std::isnan(v.at("a")[1]));
  EXPECT_EQ(v.at("a")[2], 2.5e-3);
  EXPECT_EQ(v.at("b"), std::vector<double>{-3.0});
  EXPECT_TRUE(v.at("c").empty());
  EXPECT_EQ(v.at("d\"e"), std::vector<double>{1.0});
  EXPECT_TRUE(K::detail::NumbersJson("{}").parse().empty());
  for (const char* bad :
       {"", "[1]", R"({"a": "x"})", R"({"a": [1,)", R"({"a" 1})", R"({"a": nul})"})
    EXPECT_THROW(K::detail::NumbersJson(bad).parse(), K::Error) << bad;
}

// The structs of options (generated from api/kbackend.toml) write the keys the C library checks;
// a key outside a set is refused with its name, in C++ as in C.
TEST(Models, OptionsAsValuesAndUnknownKeys) {
  K::FitArguments f;
  EXPECT_EQ(f.options_json(),
            R"({"shuffle": true, "seed": 0, "validation_split": 0, "initial_epoch": 0, )"
            R"("distributed": false})");
  f.shuffle = false;
  f.validation_split = 0.25;
  f.class_weight = {{0, 1.0}, {-1, 2.5}};
  EXPECT_EQ(f.options_json(), R"({"shuffle": false, "seed": 0, "validation_split": 0.25, )"
                              R"("initial_epoch": 0, "class_weight": {"-1": 2.5, "0": 1}, )"
                              R"("distributed": false})");
  f.validation_split = std::nan("");
  EXPECT_THROW(f.options_json(), K::Error);
  K::CompileArguments c;
  EXPECT_EQ(c.options_json(), "{}");
  c.optimizer = R"({"lr": 0.5})";
  c.loss_weights = {2};
  EXPECT_EQ(c.options_json(), R"({"optimizer": {"lr": 0.5}, "loss_weights": [2]})");

  K::Model m = K::Model::from_json(kMlp);
  try {
    m.compile("sgd", {"mse"}, {}, R"({"loss_weight": [1]})");
    ADD_FAILURE() << "an unknown compile option was taken";
  } catch (const K::Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("unknown key 'loss_weight' (did you mean 'loss_weights'?)"),
        std::string::npos)
        << e.what();
  }
  c.optimizer = "";
  m.compile("sgd", {"mse"}, {}, c);
  K::Tensor x, y;
  data(x, y, 8);
  K::FitOptions o;
  o.verbose = 0;
  o.shuffle = false;
  o.class_weight = {{1, 3.0}};
  EXPECT_NE(m.fit({x}, {y}, o).json.find("\"loss\""), std::string::npos);
}

// Keras' callbacks as structs: their JSON, and fit running them (the rate halved on each epoch
// without an improvement of 100, training stopped when patience runs out, a CSV row per epoch).
TEST(Models, KerasCallbacksAsStructs) {
  // (C++20 callers can write K::callbacks::EarlyStopping{.monitor = "loss", .patience = 2}; this
  // test builds as C++17.)
  K::callbacks::EarlyStopping early;
  early.monitor = "loss";
  early.patience = 2;
  K::KerasCallback stop = early;
  EXPECT_EQ(stop.class_name, "EarlyStopping");
  EXPECT_EQ(stop.config_json,
            R"({"monitor": "loss", "min_delta": 0, "patience": 2, "verbose": 0, "mode": "auto", )"
            R"("restore_best_weights": false, "start_from_epoch": 0})");
  K::callbacks::ModelCheckpoint checkpoint;
  checkpoint.filepath = "a\"b.keras";
  checkpoint.save_freq = int64_t(3);
  K::KerasCallback save = checkpoint;
  EXPECT_NE(save.config_json.find(R"("filepath": "a\"b.keras")"), std::string::npos);
  EXPECT_NE(save.config_json.find(R"("save_freq": 3)"), std::string::npos);

  K::Model m = K::Model::from_json(kMlp);
  m.compile("sgd", {"mse"}, {}, R"({"optimizer": {"lr": 0.1}})");
  K::Tensor x, y;
  data(x, y, 16);
  std::string csv = ::testing::TempDir() + "kb_callbacks_" + std::to_string(getpid()) + ".csv";
  K::FitOptions o;
  o.verbose = 0;
  o.epochs = 10;
  K::callbacks::ReduceLROnPlateau reduce;
  reduce.monitor = "loss";
  reduce.factor = 0.5;
  reduce.patience = 1;
  reduce.min_delta = 100;
  early.min_delta = 100;
  early.patience = 3;
  K::callbacks::CSVLogger log;
  log.filename = csv;
  o.callbacks = {reduce, early, log};
  K::History h = m.fit({x}, {y}, o);
  EXPECT_EQ(h.values.at("learning_rate"),
            (std::vector<double>{double(0.1f), double(0.1f), double(0.05f), double(0.025f)}));
  std::FILE* f = std::fopen(csv.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  char text[4096] = {};
  size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  std::remove(csv.c_str());
  EXPECT_EQ(
      std::string(text, n).rfind("epoch,learning_rate,loss,val_learning_rate,val_loss\r\n", 0), 0u)
      << text;
  o.callbacks = {K::callbacks::CSVLogger{}};
  EXPECT_THROW(m.fit({x}, {y}, o), K::Error);  // its filename is required
}

}  // namespace

namespace {

TEST(Models, CustomLayerFromCpp) {
  K::register_layer("AddBias", [](const K::CustomLayer& layer, const std::string& config,
                                  const std::vector<K::Tensor>& in) {
    if (config.find("\"fail\":true") != std::string::npos)
      throw std::runtime_error("AddBias: asked to fail");
    K::Tensor b = layer.weight("b", {in[0].shape().back()}, "\"ones\"");
    return std::vector<K::Tensor>{in[0] + b};
  });
  const char* json =
      R"({"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "AddBias",)"
      R"( "config": {"name": "ab", "batch_input_shape": [null, 2]}}]}})";
  K::Model m = K::Model::from_json(json);
  auto p = m.predict({K::Tensor::from({1.f, 2.f}, {1, 2})})[0].to_vector<float>();
  EXPECT_EQ(p, (std::vector<float>{2, 3}));
  std::string failing = json;
  failing.replace(failing.find("\"name\": \"ab\""), 12, "\"name\": \"ab\", \"fail\": true");
  try {
    K::Model::from_json(failing);
    FAIL() << "no error";
  } catch (const K::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'ab' (AddBias): AddBias: asked to fail"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace

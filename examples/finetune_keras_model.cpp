// Loads a Keras model file (examples/data/digits_mlp.h5, saved by Keras 2.2.4, or
// digits_mlp.keras, saved by Keras 3) with the C++
// layer (include/kbackend_models.hpp), fine-tunes it on the 8x8 digits with a callback that
// prints each epoch's loss, and prints the test accuracy before and after.
// Usage: finetune_keras_model_cpp model.h5 digits.csv  (exit status 0 when accuracy > 90%)
#include <kbackend_models.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " model.h5 digits.csv\n";
    return 2;
  }
  std::ifstream in(argv[2]);
  std::vector<float> xtr, ytr, xte, yte;
  std::string line;
  int64_t row = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    std::string v;
    std::getline(fields, v, ',');
    int label = std::stoi(v);
    bool test = row++ % 5 == 4;  // every fifth digit tests, as the model file's script left out
    auto& x = test ? xte : xtr;
    auto& y = test ? yte : ytr;
    while (std::getline(fields, v, ',')) x.push_back(std::stof(v) / 16.0f);
    for (int c = 0; c < 10; ++c) y.push_back(c == label ? 1.0f : 0.0f);
  }
  int64_t ntr = int64_t(ytr.size() / 10), nte = int64_t(yte.size() / 10);
  try {
    namespace K = kbackend;
    K::Model model = K::Model::load(argv[1]);
    std::cout << model.summary();
    K::Tensor x_train = K::Tensor::from(xtr, {ntr, 64}), y_train = K::Tensor::from(ytr, {ntr, 10});
    K::Tensor x_test = K::Tensor::from(xte, {nte, 64}), y_test = K::Tensor::from(yte, {nte, 10});
    double before = model.evaluate({x_test}, {y_test})[1];
    K::FitOptions options;
    options.epochs = 5;
    options.verbose = 0;
    options.seed = 1;
    options.callback = [](int64_t epoch, int64_t batch, const std::string& logs) {
      if (batch == -1) std::cout << "epoch " << epoch + 1 << ": " << logs << "\n";
      return false;
    };
    model.fit({x_train}, {y_train}, options);
    double after = model.evaluate({x_test}, {y_test})[1];
    std::cout << "test accuracy: " << 100 * before << "% before fine-tuning, " << 100 * after
              << "% after (" << nte << " test digits)\n";
    return after >= 0.9 ? 0 : 1;
  } catch (const kbackend::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

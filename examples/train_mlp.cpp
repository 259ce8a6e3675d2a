// Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the 8x8 handwritten digits with SGD,
// using the C++ layer include/kbackend.hpp (the same model as train_mlp.c, without raw handles).
// Usage: train_mlp_cpp [digits.csv]; exits 0 when the test accuracy is above 90%.
#include <kbackend.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace K = kbackend;

namespace {

constexpr int kFeatures = 64;
constexpr int kClasses = 10;

struct Digits {
  std::vector<std::vector<float>> x;  // pixels / 16
  std::vector<int> y;
};

Digits load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Digits d;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string field;
    std::getline(fields, field, ',');
    d.y.push_back(std::stoi(field));
    std::vector<float> pixels;
    while (std::getline(fields, field, ',')) pixels.push_back(std::stof(field) / 16.0f);
    if (pixels.size() != kFeatures) throw std::runtime_error("bad line in " + path);
    d.x.push_back(std::move(pixels));
  }
  return d;
}

// The same fixed pseudo-random permutation as train_mlp.c.
void shuffle(std::vector<int>& idx, unsigned& state) {
  for (int i = int(idx.size()) - 1; i > 0; --i) {
    state = state * 1103515245u + 12345u;
    int j = int((state >> 8) % unsigned(i + 1));
    std::swap(idx[size_t(i)], idx[size_t(j)]);
  }
}

// Features (n, 64) and one-hot labels (n, 10) of the digits idx[begin, end).
std::pair<K::Tensor, K::Tensor> batch(const Digits& d, const std::vector<int>& idx, size_t begin,
                                      size_t end) {
  std::vector<float> x, y;
  for (size_t i = begin; i < end; ++i) {
    const auto& pixels = d.x[size_t(idx[i])];
    x.insert(x.end(), pixels.begin(), pixels.end());
    for (int c = 0; c < kClasses; ++c) y.push_back(d.y[size_t(idx[i])] == c ? 1.0f : 0.0f);
  }
  int64_t n = int64_t(end - begin);
  return {K::Tensor::from(x, {n, kFeatures}), K::Tensor::from(y, {n, kClasses})};
}

}  // namespace

int main(int argc, char** argv) try {
  Digits data = load(argc > 1 ? argv[1] : "examples/data/digits.csv");
  std::vector<int> idx(data.y.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = int(i);
  unsigned state = 42;
  shuffle(idx, state);
  size_t n_test = idx.size() / 5, n_train = idx.size() - n_test;
  std::vector<int> train(idx.begin(), idx.begin() + long(n_train));
  std::vector<int> test(idx.begin() + long(n_train), idx.end());
  std::printf("kbackend %s (C++): %zu training and %zu test digits\n", K::version().c_str(),
              n_train, n_test);

  // The model
  K::Tensor x = K::placeholder({-1, kFeatures}, K::DType::float32, "x");
  K::Tensor y = K::placeholder({-1, kClasses}, K::DType::float32, "y");
  K::Tensor w1 = K::random_normal_variable({kFeatures, 64}, 0.0, 0.125, K::DType::float32, "w1", 1);
  K::Tensor w2 = K::random_normal_variable({64, kClasses}, 0.0, 0.125, K::DType::float32, "w2", 2);
  K::Tensor b1 = K::zeros({64}, K::DType::float32, "b1");
  K::Tensor b2 = K::zeros({kClasses}, K::DType::float32, "b2");
  K::Tensor hidden = K::relu(K::bias_add(K::dot(x, w1), b1));
  K::Tensor probs = K::softmax(K::bias_add(K::dot(hidden, w2), b2));
  K::Tensor loss = K::mean(K::categorical_crossentropy(y, probs));

  // SGD: param <- param - lr * grad
  std::vector<K::Tensor> params{w1, b1, w2, b2};
  std::vector<K::Tensor> grads = K::gradients(loss, params);
  std::vector<K::Tensor> updates;
  for (size_t i = 0; i < params.size(); ++i)
    updates.push_back(K::update_sub(params[i], grads[i] * 0.5));
  K::Function train_step({x, y}, {loss}, updates);
  K::Function predict({x}, {probs});

  const size_t batch_size = 32;
  const int epochs = 30;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(train, state);
    double total = 0;
    int batches = 0;
    for (size_t s = 0; s < n_train; s += batch_size) {
      auto [bx, by] = batch(data, train, s, std::min(n_train, s + batch_size));
      total += train_step({bx, by})[0].item<float>();
      ++batches;
    }
    if (epoch == 1 || epoch % 5 == 0) std::printf("epoch %2d  loss %.4f\n", epoch, total / batches);
  }

  // Test accuracy
  K::Tensor test_x = batch(data, test, 0, n_test).first;
  std::vector<float> p = predict({test_x})[0].to_vector<float>();
  size_t correct = 0;
  for (size_t i = 0; i < n_test; ++i) {
    int best = 0;
    for (int c = 1; c < kClasses; ++c)
      if (p[i * kClasses + size_t(c)] > p[i * kClasses + size_t(best)]) best = c;
    correct += best == data.y[size_t(test[i])];
  }
  std::printf("test accuracy %.2f%% (%zu/%zu)\n", 100.0 * double(correct) / double(n_test), correct,
              n_test);
  return correct * 10 > n_test * 9 ? 0 : 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "train_mlp_cpp: %s\n", e.what());
  return 1;
}

// A C++ program outside the project: y = x * 2 + 1 through the installed header-only C++ layer
// (kbackend.hpp, which includes kbackend.h next to it), run on [1, 2, 3]. Prints OK on success.
#include <kbackend.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

int main() try {
  namespace K = kbackend;
  K::Tensor x = K::placeholder({-1}, K::DType::float32, "x");
  K::Function f({x}, {x * 2 + 1});
  std::vector<float> got = f({K::Tensor::from({1.f, 2.f, 3.f})})[0].to_vector<float>();
  const float want[3] = {3, 5, 7};
  for (size_t i = 0; i < 3; ++i)
    if (got.size() != 3 || std::fabs(got[i] - want[i]) > 1e-6f) {
      std::fprintf(stderr, "consumer_hpp: wrong result\n");
      return 1;
    }
  std::printf("OK (kbackend %s, C++)\n", K::version().c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "consumer_hpp: %s\n", e.what());
  return 1;
}

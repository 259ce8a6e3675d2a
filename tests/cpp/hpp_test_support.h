// What the tests of the C++ layer share: comparing values and catching kbackend::Error.
#ifndef KB_TESTS_CPP_HPP_TEST_SUPPORT_H
#define KB_TESTS_CPP_HPP_TEST_SUPPORT_H

#include <kbackend.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace kb_test {

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want,
                        float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

inline std::vector<float> values(const kbackend::Tensor& t) { return t.to_vector<float>(); }

// Runs f and returns the Error it throws (fails the test if none).
template <class F>
kbackend::Error error_of(F&& f) {
  try {
    f();
  } catch (const kbackend::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no kbackend::Error thrown";
  return kbackend::Error(KB_OK, "");
}

}  // namespace kb_test

#endif  // KB_TESTS_CPP_HPP_TEST_SUPPORT_H

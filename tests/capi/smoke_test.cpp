#include <gtest/gtest.h>
#include <kbackend.h>

TEST(Smoke, VersionAndBackend) {
  EXPECT_EQ(kb_abi_version(), KB_ABI_VERSION);
  EXPECT_STREQ(kb_backend(), "kbackend");
}

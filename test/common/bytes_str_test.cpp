#include "common/bytes_str.hpp"

#include <gtest/gtest.h>

namespace stoker::common {
namespace {

// Messages print sizes exactly, so a user can compare them with the limit
// they broke digit for digit.
TEST(BytesStr, PrintsTheExactCount) {
  EXPECT_EQ(bytes_str(0), "0 bytes");
  EXPECT_EQ(bytes_str(83890176), "83890176 bytes");
}

}  // namespace
}  // namespace stoker::common

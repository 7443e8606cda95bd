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

// Sizes a user chose (2^28 elements) read at a glance beside the exact
// count; below 1 KiB the count says it all.
TEST(BytesStr, WithUnitsKeepsTheExactCountAndAddsTheSize) {
  EXPECT_EQ(bytes_with_units(0), "0 bytes");
  EXPECT_EQ(bytes_with_units(1023), "1023 bytes");
  EXPECT_EQ(bytes_with_units(1024), "1024 bytes (1.0 KiB)");
  EXPECT_EQ(bytes_with_units(1048575), "1048575 bytes (1.0 MiB)");
  EXPECT_EQ(bytes_with_units(2048000000), "2048000000 bytes (1.9 GiB)");
  EXPECT_EQ(bytes_with_units(25769803776), "25769803776 bytes (24.0 GiB)");
  EXPECT_EQ(bytes_with_units(~std::size_t{0}), "18446744073709551615 bytes (16.0 EiB)");
}

}  // namespace
}  // namespace stoker::common

#include "devices/meminfo.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace stoker::devices {
namespace {

TEST(MemInfo, ReadsTotalAndAvailableInBytes) {
  const auto m = parse_meminfo(
      "MemTotal:       16318504 kB\n"
      "MemFree:         1234567 kB\n"
      "MemAvailable:   12000000 kB\n"
      "HugePages_Total:       0\n");
  EXPECT_EQ(m.total_bytes, std::uint64_t{16318504} * 1024);
  EXPECT_EQ(m.available_bytes, std::uint64_t{12000000} * 1024);
}

TEST(MemInfo, LeavesMissingOrMalformedFiguresUnknown) {
  const auto empty = parse_meminfo("");
  EXPECT_FALSE(empty.total_bytes.has_value());
  EXPECT_FALSE(empty.available_bytes.has_value());
  const auto bad = parse_meminfo("MemTotal: lots kB\nMemAvailable:\n");
  EXPECT_FALSE(bad.total_bytes.has_value());
  EXPECT_FALSE(bad.available_bytes.has_value());
}

// The pinned allocator refuses a mapping larger than MemAvailable, so on
// Linux both figures must come back from the real file.
TEST(MemInfo, ReadsThisHostsFigures) {
  const auto m = read_meminfo();
  ASSERT_TRUE(m.total_bytes.has_value());
  ASSERT_TRUE(m.available_bytes.has_value());
  EXPECT_GT(*m.total_bytes, 0u);
  EXPECT_LE(*m.available_bytes, *m.total_bytes);
}

}  // namespace
}  // namespace stoker::devices

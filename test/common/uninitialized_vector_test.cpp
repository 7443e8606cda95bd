// UninitializedVector: resize leaves trivial elements as they are, and
// buffers from 8 MiB up are 2 MiB-aligned and advised as huge pages.
#include "common/uninitialized_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

namespace stoker::common {
namespace {

// The VmFlags of the mapping of /proc/self/smaps that holds `p`, or "".
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(' ') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(UninitializedVector, SmallAndLargeBuffersHoldWhatIsWritten) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (kHugePageBufferBytes / 8) + 3}) {
    UninitializedVector<std::uint64_t> v;
    v.resize(n);
    std::iota(v.begin(), v.end(), std::uint64_t{7});
    v.resize(n + 5);  // a move to a second buffer keeps the first n
    for (std::size_t i = 0; i < n; i += 997) ASSERT_EQ(v[i], 7 + i) << n;
    EXPECT_EQ(v[n - 1], 7 + n - 1);
  }
}

TEST(UninitializedVector, LargeBuffersAreHugePageAlignedAndAdvised) {
  UninitializedVector<std::uint64_t> v(kHugePageBufferBytes / 8);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePageBytes, 0u);
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  const std::string flags = vm_flags_of(v.data());
  ASSERT_FALSE(flags.empty()) << "no mapping of /proc/self/smaps holds the buffer";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
}

}  // namespace
}  // namespace stoker::common

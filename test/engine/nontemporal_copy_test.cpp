// The non-temporal copy (staging chunks, bounce copies): byte-exact for any
// source alignment and length, aligned destinations and unaligned ones (a
// memcpy head, then lanes).
#include "engine/detail/nontemporal_copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker::engine::detail {
namespace {

TEST(NontemporalCopy, CopiesEveryByteAtAnyAlignmentAndLength) {
  // Which path ran: without AVX-512 (or with STOKER_STAGING_COPY=memcpy)
  // this checks memcpy only.
  RecordProperty("nontemporal_stores", nontemporal_copy_streams() ? "yes" : "no (memcpy)");
  constexpr std::size_t kMax = (std::size_t{1} << 20) + 300;  // past the prefetch distance
  constexpr std::size_t kGuard = 64;
  constexpr std::byte kGuardByte{0xee};
  std::vector<std::byte> src(kMax + 64), dst(kGuard + 64 + 63 + kMax + kGuard);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  // A 64-byte line at least kGuard bytes into dst.
  auto* line = reinterpret_cast<std::byte*>(
      (reinterpret_cast<std::uintptr_t>(dst.data()) + kGuard + 63) / 64 * 64);
  for (std::size_t dst_shift : {0u, 8u, 16u, 63u})
    for (std::size_t src_shift : {0u, 1u, 17u, 64u})
      for (std::size_t n : {0u, 1u, 255u, 256u, 257u, 4096u, 20000u, static_cast<unsigned>(kMax)}) {
        std::byte* d = line + dst_shift;
        std::fill(dst.begin(), dst.end(), kGuardByte);
        nontemporal_copy(d, src.data() + src_shift, n);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(d[i], src[src_shift + i])
              << "byte " << i << " of " << n << ", src +" << src_shift << ", dst +" << dst_shift;
        const auto guard = [&](std::byte b) { return b == kGuardByte; };
        ASSERT_TRUE(std::all_of(dst.data(), d, guard))
            << "wrote before the start (" << n << " bytes, dst +" << dst_shift << ")";
        ASSERT_TRUE(std::all_of(d + n, dst.data() + dst.size(), guard))
            << "wrote past the end (" << n << " bytes, dst +" << dst_shift << ")";
      }
}

}  // namespace
}  // namespace stoker::engine::detail

// The streaming copy (staging chunks, bounce copies): byte-exact for any
// source alignment and length, aligned destinations and unaligned ones (a
// memcpy head, then lanes).
#include "engine/detail/streaming_copy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker::engine::detail {
namespace {

TEST(StreamingCopy, CopiesEveryByteAtAnyAlignmentAndLength) {
  constexpr std::size_t kMax = (std::size_t{1} << 20) + 300;  // past the prefetch distance
  std::vector<std::byte> src(kMax + 64), dst(kMax + 192);  // room for 63 + 63 + 17
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  auto* aligned =
      reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(dst.data()) + 63) / 64 * 64);
  for (std::size_t dst_shift : {0u, 8u, 16u, 63u})
    for (std::size_t src_shift : {0u, 1u, 17u, 64u})
      for (std::size_t n : {0u, 1u, 255u, 256u, 257u, 4096u, 20000u, static_cast<unsigned>(kMax)}) {
        std::byte* d = aligned + dst_shift;
        for (std::size_t i = 0; i < n + 16; ++i) d[i] = std::byte{0xee};
        streaming_copy(d, src.data() + src_shift, n);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(d[i], src[src_shift + i])
              << "byte " << i << " of " << n << ", src +" << src_shift << ", dst +" << dst_shift;
        EXPECT_EQ(d[n], std::byte{0xee}) << "wrote past the end (" << n << " bytes)";
      }
}

}  // namespace
}  // namespace stoker::engine::detail

// The GPU batched check's host arithmetic: ChaCha20 against RFC 8439 and
// openssl, the coins' digits, the shape's cost model.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/detail/chacha20.hpp"
#include "kernels/detail/point_check_batch.hpp"

namespace stoker::kernels::gpu::detail {
namespace {

std::string hex_le(const std::uint32_t words[16]) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i)
    for (int b = 0; b < 4; ++b) {
      const unsigned byte = (words[i] >> (8 * b)) & 0xff;
      s += digits[byte >> 4];
      s += digits[byte & 15];
    }
  return s;
}

ChaChaKey key_0_to_31() {
  ChaChaKey k{};
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 4; ++b) k.words[i] |= std::uint32_t(4 * i + b) << (8 * b);
  return k;
}

// RFC 8439, 2.3.2: key 00 01 .. 1f, counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00.
TEST(ChaCha20, BlockOfRfc8439) {
  const std::uint32_t nonce[3] = {0x09000000u, 0x4a000000u, 0};
  std::uint32_t out[16];
  chacha20_block(key_0_to_31(), 1, nonce, out);
  EXPECT_EQ(hex_le(out),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
            "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
}

// `openssl enc -chacha20 -K 000102..1f -iv ffffffff123456780200000000000000`
// over 64 zero bytes: the counter's last value, the nonce's words apart.
TEST(ChaCha20, BlockAtTheLastCounterAsOpensslStreamsIt) {
  const std::uint32_t nonce[3] = {0x78563412u, 2, 0};
  std::uint32_t out[16];
  chacha20_block(key_0_to_31(), 0xffffffffu, nonce, out);
  EXPECT_EQ(hex_le(out),
            "e60cd4335a73ce771f8dd6be98b37edf156bdb6d42f260049ca369432291850c"
            "eb6d9fb08bd8f0d576646aef9d6b925363f562989361ce2892d6a51cf4889cbc");
}

TEST(BatchCheckCoins, EachPointHasItsOwnQuarterOfABlock) {
  const CoinSource a = coin_source(5, 1);
  EXPECT_EQ(a.counter, 1u);
  EXPECT_EQ(a.nonce[0], 0u);
  EXPECT_EQ(a.nonce[1], 1u);
  EXPECT_EQ(a.word, 4u);
  const CoinSource b = coin_source((std::uint64_t{1} << 34) + 7, 2);
  EXPECT_EQ(b.counter, 1u);  // block 2^32 + 1
  EXPECT_EQ(b.nonce[0], 1u);
  EXPECT_EQ(b.nonce[1], 2u);
  EXPECT_EQ(b.word, 12u);
}

// The digits are disjoint bits of the coin: put back together they give
// its low c W bits, whatever c.
TEST(BatchCheckCoins, DigitsPutBackTogetherGiveTheCoinsLowBits) {
  const std::uint32_t coin[4] = {0x89abcdefu, 0x01234567u, 0xdeadbeefu, 0x0badf00du};
  const unsigned __int128 whole = (static_cast<unsigned __int128>(coin[3]) << 96) |
                                  (static_cast<unsigned __int128>(coin[2]) << 64) |
                                  (static_cast<unsigned __int128>(coin[1]) << 32) | coin[0];
  for (unsigned c = kCheckMinBits; c <= kCheckMaxBits; ++c) {
    const unsigned w = check_windows(c);
    ASSERT_GE(c * w, kCheckSecurityBits);
    ASSERT_LE(c * w, 128u);
    unsigned __int128 back = 0;
    for (unsigned i = 0; i < w; ++i) {
      const std::uint32_t d = coin_digit(coin, c, i);
      ASSERT_LT(d, 1u << c);
      back |= static_cast<unsigned __int128>(d) << (c * i);
    }
    const unsigned __int128 mask = (static_cast<unsigned __int128>(1) << (c * w)) - 1;
    EXPECT_TRUE(back == (whole & mask)) << "c = " << c;
  }
}

// Larger ranges take larger buckets (the tests per bucket spread over more
// points), always with at least 64 bits of coins.
TEST(BatchCheckShape, BucketsGrowWithTheRangeAndKeep64BitsOfCoins) {
  unsigned last = 0;
  for (std::size_t n : {std::size_t{1}, std::size_t{4096}, std::size_t{1} << 16,
                        std::size_t{1} << 21, std::size_t{1} << 24, std::size_t{1} << 26}) {
    const BatchCheckShape s = batch_check_shape(n);
    EXPECT_GE(s.bits, kCheckMinBits);
    EXPECT_LE(s.bits, kCheckMaxBits);
    EXPECT_EQ(s.windows, check_windows(s.bits));
    EXPECT_GE(s.bits * s.windows, kCheckSecurityBits);
    EXPECT_GE(s.bits, last) << n;
    last = s.bits;
  }
  // A pinned chunk of the key's load (2^21 points): 6 windows of 11 bits,
  // 6 additions a point against about 100 for testing each point.
  EXPECT_EQ(batch_check_shape(std::size_t{1} << 21).bits, 11u);
  EXPECT_EQ(batch_check_shape(std::size_t{1} << 21).windows, 6u);
}

}  // namespace
}  // namespace stoker::kernels::gpu::detail

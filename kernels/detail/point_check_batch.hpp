// The shape of the GPU's batched group check (point_check_batch_gpu.cu) and
// the coins behind it, as plain host arithmetic that the host tests check.
//
// Each point of a range gets a 128-bit coin from ChaCha20 (chacha20.hpp,
// keyed by the OS CSPRNG); W windows of c bits of it (c W >= 64) are its
// digits, and window w's digit d != 0 puts the point in bucket d of that
// window (0: in none). The buckets are summed as a Pippenger sums its
// buckets (the MSM's sort and accumulation), then every bucket's sum is
// tested for membership exactly. Why that is sound: write each point as
// its part in the group plus a part T in the cofactor's torsion. A bucket's
// sum is in the group iff its points' T cancel. Take a point with T != 0
// and fix every other coin: in one window, let X_b be the T-sum bucket b
// would have without it. If two or more X_b are non-zero, the window fails
// a test whatever the point's digit; if none is, it passes only where the
// digit is 0; if one is, only where the digit is that bucket's and X_b =
// -T. So each window passes with probability at most 2^-c, the windows'
// digits are disjoint bits of the coin, and a range with a bad point passes
// with probability at most 2^-(c W) <= 2^-64 (the cofactors of G1 and G2
// are odd, so -T != T).
//
// Cost: W mixed additions a point (the sort's passes beside them), and
// W (2^c - 1) bucket tests a range, each a membership test and an affine
// conversion: about 150 mixed additions in either group (G1: ~1020 Fq
// products and an inversion's ~450, against 10 an addition). c is chosen
// per range size to balance the two; against about 100 additions' worth of
// products for a test of each point, 4-7 additions a point.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/msm_window.hpp"

namespace stoker::kernels::gpu::detail {

inline constexpr unsigned kCheckSecurityBits = 64;
inline constexpr unsigned kCheckMinBits = 4, kCheckMaxBits = 16;
inline constexpr double kBucketTestCost = 150.0;  // in mixed additions

struct BatchCheckShape {
  unsigned bits = 0;     // c
  unsigned windows = 0;  // W, c W >= kCheckSecurityBits
};

constexpr unsigned check_windows(unsigned c) {
  return (kCheckSecurityBits + c - 1) / c;
}

// The cost model above over c in [kCheckMinBits, kCheckMaxBits] for a range
// of n points: additions and sort passes per point, tests per bucket.
constexpr BatchCheckShape batch_check_shape(std::size_t n) {
  BatchCheckShape best;
  double best_cost = 0;
  for (unsigned c = kCheckMinBits; c <= kCheckMaxBits; ++c) {
    const unsigned w = check_windows(c);
    // The buckets' keys are sorted on c + 1 bits (msm_window.hpp's layout
    // with 2^c buckets a window).
    const double per_point = w * (1.0 + kSortPassPerEntry * radix_passes(c + 1));
    const double cost = static_cast<double>(n) * per_point +
                        kBucketTestCost * w * static_cast<double>((std::uint32_t{1} << c) - 1);
    if (best.bits == 0 || cost < best_cost) {
      best = {c, w};
      best_cost = cost;
    }
  }
  return best;
}

// Where point i's coin comes from: words [4 (i mod 4), 4 (i mod 4) + 4) of
// ChaCha20 block i / 4, the block's index split into the counter (low 32
// bits) and the nonce's first word; the nonce's second word tells the
// groups apart.
struct CoinSource {
  std::uint32_t counter;
  std::uint32_t nonce[3];
  unsigned word;
};
STOKER_HD CoinSource coin_source(std::uint64_t i, std::uint32_t group_tag) {
  const std::uint64_t block = i / 4;
  return {static_cast<std::uint32_t>(block),
          {static_cast<std::uint32_t>(block >> 32), group_tag, 0u},
          static_cast<unsigned>(i % 4) * 4};
}

// Bits [c w, c w + c) of a 128-bit coin (little-endian words); c <= 16 and
// c (w + 1) <= 128.
STOKER_HD std::uint32_t coin_digit(const std::uint32_t coin[4], unsigned c, unsigned w) {
  const unsigned at = c * w, word = at / 32, off = at % 32;
  std::uint64_t v = coin[word];
  if (word + 1 < 4) v |= std::uint64_t{coin[word + 1]} << 32;
  return static_cast<std::uint32_t>(v >> off) & ((std::uint32_t{1} << c) - 1);
}

}  // namespace stoker::kernels::gpu::detail

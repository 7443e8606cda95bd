// Scalars to sort entries: each scalar (Fr, Montgomery form, as the NTT and
// hpoly leave it) becomes W signed digits of c bits, and each non-zero digit
// an entry (key = part * W * 2^(c-1) + window * 2^(c-1) + |digit| - 1, or
// window * 2^c + |digit| - 1 where each window is sorted on its own;
// value = point index with the sign in bit 31) for the bucket sort. Zero
// digits get kNoKey, which sorts after every bucket (msm_window.hpp).
//
// The arithmetic is __host__ __device__: the host tests check that the
// digits put back together give the scalar.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/msm_window.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels::gpu::detail {

// (r - 1) / 2, little-endian 64-bit limbs.
inline constexpr std::uint64_t kHalfR0 = 0x7fffffff80000000ull, kHalfR1 = 0xa9ded2017fff2dffull,
                               kHalfR2 = 0x199cec0404d0ec02ull, kHalfR3 = 0x39f6d3a994cebea4ull;

// k > (r - 1) / 2: k becomes r - k and the point's sign flips, so that
// k < 2^254 and ceil(255 / c) windows of signed digits always suffice.
STOKER_HD bool fold_above_half(std::uint64_t k[4]) {
  const std::uint64_t h[4] = {kHalfR0, kHalfR1, kHalfR2, kHalfR3};
  bool above = false, decided = false;
  for (int i = 3; i >= 0; --i) {
    if (!decided && k[i] != h[i]) {
      above = k[i] > h[i];
      decided = true;
    }
  }
  if (!above) return false;
  const std::uint64_t r[4] = {fr_detail::kP0, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3};
  std::uint64_t borrow = 0;
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t d = r[i] - k[i];
    const std::uint64_t b1 = r[i] < k[i];
    const std::uint64_t d2 = d - borrow;
    const std::uint64_t b2 = d < borrow;
    k[i] = d2;
    borrow = b1 | b2;
  }
  return true;
}

// Calls digit(w, magnitude, negative) for w = 0..windows-1, least
// significant first, with magnitude in [0, 2^(c-1)]. `k` (canonical,
// < 2^254 after fold_above_half) is consumed. sum_w d_w 2^(c w) == k.
template <typename Digit>
STOKER_HD void signed_digits(std::uint64_t k[4], unsigned c, unsigned windows, Digit&& digit) {
  const std::uint64_t mask = (std::uint64_t{1} << c) - 1;
  const std::uint64_t half = std::uint64_t{1} << (c - 1);
  std::uint64_t carry = 0;
  for (unsigned w = 0; w < windows; ++w) {
    const std::uint64_t v = (k[0] & mask) + carry;
    k[0] = (k[0] >> c) | (k[1] << (64 - c));
    k[1] = (k[1] >> c) | (k[2] << (64 - c));
    k[2] = (k[2] >> c) | (k[3] << (64 - c));
    k[3] >>= c;
    if (v > half) {
      digit(w, static_cast<std::uint32_t>((mask + 1) - v), true);
      carry = 1;
    } else {
      digit(w, static_cast<std::uint32_t>(v), false);
      carry = 0;
    }
  }
}

#if defined(__CUDACC__)
// One thread per scalar; entries are window-major (entry w * n + i), so
// each window's writes are coalesced, and the radix sort, being stable,
// keeps each bucket's points in index order. Point i belongs to the part
// whose range holds it (msm_window.hpp).
struct PartBounds {
  unsigned parts;
  std::size_t begin[kMaxParts + 1];
  unsigned key_shift;  // log2 of the keys' step from one window to the next
};

// point_index: null, or the point of scalar i (a sparse MSM's tail, whose
// scalars are a subset of the points'; one part then).
__global__ void scalar_digits_kernel(const Fr* __restrict__ scalars,
                                     const std::uint32_t* __restrict__ point_index, std::size_t n,
                                     unsigned c, unsigned windows, PartBounds bounds,
                                     std::uint32_t* __restrict__ keys,
                                     std::uint32_t* __restrict__ values) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(scalars + i);
  const ulonglong2 a = __ldg(q), b = __ldg(q + 1);
  std::uint64_t k[4];
  Fr{{a.x, a.y, b.x, b.y}}.to_canonical(k);
  const bool neg = fold_above_half(k);
  const std::uint32_t per_part = windows << bounds.key_shift;
  std::uint32_t part = 0;
  for (unsigned k = 1; k < bounds.parts; ++k) part += i >= bounds.begin[k];
  const std::uint32_t base = part * per_part;
  const std::uint32_t index = point_index ? point_index[i] : static_cast<std::uint32_t>(i);
  signed_digits(k, c, windows, [&](unsigned w, std::uint32_t mag, bool negative) {
    const std::size_t e = std::size_t{w} * n + i;
    keys[e] = mag ? base + (w << bounds.key_shift) + (mag - 1) : kNoKey;
    values[e] = index | (static_cast<std::uint32_t>(negative != neg) << 31);
  });
}
#endif

}  // namespace stoker::kernels::gpu::detail

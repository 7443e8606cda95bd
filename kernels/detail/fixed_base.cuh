// The arithmetic of kernels/fixed_base.hpp that the CPU and the GPU share,
// in either group: the table's layout, how one of its entries is computed
// from the generator, and the per-point sum of table entries.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#if defined(__CUDACC__)
#include "kernels/detail/msm_point_io.cuh"
#endif

namespace stoker::kernels::detail {

inline constexpr unsigned kFixedBaseWindowBits = 8;
inline constexpr unsigned kFixedBaseWindows = 32;  // 256 bits cover every scalar < r < 2^255
inline constexpr unsigned kFixedBaseDigits = (1u << kFixedBaseWindowBits) - 1;  // 1..255
inline constexpr std::size_t kFixedBaseTableEntries =
    std::size_t{kFixedBaseWindows} * kFixedBaseDigits;
// 765 KiB in G1, 1.5 MiB in G2.
template <typename Affine>
inline constexpr std::size_t kFixedBaseTableBytes = kFixedBaseTableEntries * sizeof(Affine);

// Where [d 2^(8w)] G sits in the table (d in 1..255).
STOKER_HD std::size_t fixed_base_index(unsigned window, unsigned digit) {
  return std::size_t{window} * kFixedBaseDigits + (digit - 1);
}

// Entry `index` of the table of Affine's generator, computed on its own: 8w
// doublings of G, then d by double-and-add. The GPU builds its table this
// way, one thread per entry; the CPU builds it incrementally, so the two are
// independent checks of each other.
template <typename Affine>
STOKER_HD XyzzOf<Affine> fixed_base_entry(std::size_t index) {
  const unsigned window = static_cast<unsigned>(index / kFixedBaseDigits);
  const unsigned digit = static_cast<unsigned>(index % kFixedBaseDigits) + 1;
  XyzzOf<Affine> base = to_xyzz(Affine::generator());
  for (unsigned i = 0; i < window * kFixedBaseWindowBits; ++i) base = dbl(base);
  auto acc = XyzzOf<Affine>::infinity();
  for (int b = kFixedBaseWindowBits - 1; b >= 0; --b) {
    acc = dbl(acc);
    if ((digit >> b) & 1) add(acc, base);
  }
  return acc;
}

template <typename Affine>
STOKER_HD Affine fixed_base_load(const Affine* table, std::size_t index) {
#if defined(__CUDA_ARCH__)
  return gpu::detail::load_affine(table + index);
#else
  return table[index];
#endif
}

// [s] G as the sum of one table entry per non-zero byte of s, for a table
// of G1's generator (G1Affine) or G2's (G2Affine).
template <typename Affine>
STOKER_HD auto fixed_base_sum(const Affine* table, const Fr& s) {
  std::uint64_t k[4];
  s.to_canonical(k);
  auto acc = XyzzOf<Affine>::infinity();
  for (unsigned w = 0; w < kFixedBaseWindows; ++w) {
    const unsigned digit = static_cast<unsigned>(k[w / 8] >> (8 * (w % 8))) & 0xffu;
    if (digit) add_mixed(acc, fixed_base_load(table, fixed_base_index(w, digit)));
  }
  return acc;
}

}  // namespace stoker::kernels::detail

// CPU fixed-base multiplication; see fixed_base.hpp.
//
// The table is built once per process, window by window: B_w = [2^(8w)] G
// by doubling, then d B_w = (d - 1) B_w + B_w for d = 2..255, each window's
// 255 sums taken to affine with one shared inversion. Points are summed in
// batches whose affine conversion also shares one inversion (Montgomery's
// trick: three products per point instead of an inversion, ~570 products).
#include <algorithm>
#include <array>
#include <vector>

#include "kernels/detail/fixed_base.cuh"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/fixed_base.hpp"
#include "kernels/g2.cuh"

namespace stoker::kernels::cpu {
namespace {

using kernels::detail::fixed_base_index;
using kernels::detail::kFixedBaseDigits;
using kernels::detail::kFixedBaseTableEntries;
using kernels::detail::kFixedBaseWindowBits;
using kernels::detail::kFixedBaseWindows;

constexpr std::size_t kBatch = 256;

using kernels::detail::XyzzOf;
template <typename Affine>
using FieldOf = typename kernels::detail::MsmGroupTraits<Affine>::Field;

// out[i] = to_affine(in[i]) for i < count, with one inversion for the batch
// (`prefix` holds count elements of working space). The same values as
// to_affine: 1 / ZZZ comes from the shared inversion instead of its own.
template <typename Affine>
void batch_to_affine(const XyzzOf<Affine>* in, Affine* out, std::size_t count,
                     FieldOf<Affine>* prefix) {
  using Field = FieldOf<Affine>;
  Field acc = Field::one();
  for (std::size_t i = 0; i < count; ++i) {
    prefix[i] = acc;
    if (!in[i].is_infinity()) acc *= in[i].zzz;
  }
  Field inv = acc.inverse();
  for (std::size_t i = count; i-- > 0;) {
    if (in[i].is_infinity()) {
      out[i] = Affine::infinity();
      continue;
    }
    const Field zzz_inv = inv * prefix[i];
    inv *= in[i].zzz;
    const Field z_inv = in[i].zz * zzz_inv;
    out[i] = Affine{in[i].x * z_inv.sqr(), in[i].y * zzz_inv};
  }
}

template <typename Affine>
std::vector<Affine> build_table() {
  std::vector<Affine> table(kFixedBaseTableEntries);
  std::array<XyzzOf<Affine>, kFixedBaseDigits> sums;
  std::array<FieldOf<Affine>, kFixedBaseDigits> prefix;
  Affine base = Affine::generator();
  for (unsigned w = 0; w < kFixedBaseWindows; ++w) {
    sums[0] = to_xyzz(base);
    for (unsigned d = 2; d <= kFixedBaseDigits; ++d) {
      sums[d - 1] = sums[d - 2];
      add_mixed(sums[d - 1], base);
    }
    batch_to_affine(sums.data(), &table[fixed_base_index(w, 1)], kFixedBaseDigits, prefix.data());
    // 256 B_w = 2 * (128 B_w): the next window's base.
    XyzzOf<Affine> next = sums[(1u << (kFixedBaseWindowBits - 1)) - 1];
    next = dbl(next);
    base = to_affine(next);
  }
  return table;
}

template <typename Affine>
const Affine* table() {
  static const std::vector<Affine> t = build_table<Affine>();
  return t.data();
}

template <typename Affine>
void multiply(Affine* out, const Fr* scalars, std::size_t n, unsigned threads) {
  if (n == 0) return;
  const Affine* t = table<Affine>();
  kernels::detail::parallel_for(
      n, threads,
      [&](std::size_t begin, std::size_t end) {
        std::vector<XyzzOf<Affine>> sums(kBatch);
        std::vector<FieldOf<Affine>> prefix(kBatch);
        for (std::size_t b = begin; b < end; b += kBatch) {
          const std::size_t count = std::min(kBatch, end - b);
          for (std::size_t i = 0; i < count; ++i)
            sums[i] = kernels::detail::fixed_base_sum(t, scalars[b + i]);
          batch_to_affine(sums.data(), out + b, count, prefix.data());
        }
      },
      /*grain=*/kBatch);
}

}  // namespace

void fixed_base_mul(G1Affine* out, const Fr* scalars, std::size_t n, unsigned threads) {
  multiply(out, scalars, n, threads);
}

void fixed_base_mul(G2Affine* out, const Fr* scalars, std::size_t n, unsigned threads) {
  multiply(out, scalars, n, threads);
}

}  // namespace stoker::kernels::cpu

// The barycentric sums of the hpoly and ntt_msm_h checks
// (hpoly_workload.hpp): A(x), B(x), C(x) from the regenerated evaluations
// without a second NTT, their weights at x, and h(x) by Horner.
#include <algorithm>
#include <vector>

#include "engine/workloads/hpoly_workload.hpp"
#include "kernels/detail/fr_mul_adx.hpp"
#include "kernels/detail/fr_sum_of_products.hpp"
#include "kernels/detail/parallel.hpp"

namespace stoker::engine::workloads {

using kernels::Fr;

namespace {

using kernels::detail::FrSumOfProducts;

// The checks' products through the ADX product where this build and CPU
// have it (the same words, fr_mul_adx.hpp), else Fr's own.
bool sums_adx_supported() {
#if defined(STOKER_FR_MUL_ADX)
  static const bool supported = kernels::detail::cpu_has_adx();
  return supported;
#else
  return false;
#endif
}

template <bool kAdx>
inline Fr mul(const Fr& a, const Fr& b) {
#if defined(STOKER_FR_MUL_ADX)
  if constexpr (kAdx) return kernels::detail::fr_mul_adx(a, b);
#endif
  return a * b;
}

// Elements a chunk of the checks regenerates at a time: a, b and the
// weights of a chunk (64 KiB each) stay in L2 between the passes over them.
constexpr std::size_t kSumsChunk = 2048;

// The weights t_k = 1 / (u_k - 1) of `len` consecutive elements, u_0 = u and
// u_{k+1} = u_k w^-1, by batch inversion: the denominators' running
// products (in `prefix`), one inversion, then two products back per
// element. Returns u_len. x off the domain keeps every denominator nonzero.
template <bool kAdx>
Fr weights_chunk(Fr u, const Fr& w_inv, std::size_t len, Fr* t, Fr* prefix) {
  // The products' operands are locals, not t[k] or prefix[k]: an indexed
  // operand takes two registers, which Clang cannot find beside the ADX
  // product's.
  Fr acc = Fr::one();
  for (std::size_t k = 0; k < len; ++k) {
    const Fr d = u - Fr::one();
    t[k] = d;
    prefix[k] = acc;  // product of the denominators before k
    acc = mul<kAdx>(acc, d);
    u = mul<kAdx>(u, w_inv);
  }
  Fr inv = acc.inverse();  // 1 / (product of all of them)
  for (std::size_t k = len; k-- > 0;) {
    const Fr d = t[k], before = prefix[k];
    t[k] = mul<kAdx>(inv, before);
    inv = mul<kAdx>(inv, d);
  }
  return u;
}

// Larger chunks than the sums' when the weights are all that is made: a
// chunk's inversion is about 400 of Fr's products, 0.2 per element at 2048.
constexpr std::size_t kWeightsChunk = 8192;

template <bool kAdx>
void hpoly_weights_range(const Fr& x, const Fr& w_inv, std::size_t lo, std::size_t hi, Fr* t) {
  std::vector<Fr> prefix(kWeightsChunk);
  Fr u = x * w_inv.pow(static_cast<std::uint64_t>(lo));
  for (std::size_t begin = lo; begin < hi; begin += kWeightsChunk)
    u = weights_chunk<kAdx>(u, w_inv, std::min(kWeightsChunk, hi - begin), t + begin,
                            prefix.data());
}

struct WideSums {
  FrSumOfProducts a, b, c;
};

// sum a_k t_k, sum b_k t_k and sum a_k b_k t_k over a chunk, with c_k t_k =
// a_k (b_k t_k) since c = a * b: one Montgomery product (bt, which feeds the
// third sum) and two products left unreduced per element.
template <bool kAdx>
void add_chunk(const Fr* a, const Fr* b, const Fr* t, std::size_t len, WideSums& s) {
  for (std::size_t k = 0; k < len; ++k) {
    const Fr bt = mul<kAdx>(b[k], t[k]);
#if defined(STOKER_FR_MUL_ADX)
    if constexpr (kAdx) {
      s.a.add_product_adx(a[k], t[k]);
      s.b.add_adx(bt);
      s.c.add_product_adx(a[k], bt);
      continue;
    }
#endif
    s.a.add_product(a[k], t[k]);
    s.b.add(bt);
    s.c.add_product(a[k], bt);
  }
}

// Barycentric sums and h(x) over [lo, hi). With u_i = x w^-i,
// w^i / (x - w^i) = 1 / (u_i - 1) = t_i: read from `weights` when given
// (all n of them), else worked out chunk by chunk.
template <bool kAdx>
HpolySums sums_range(std::uint64_t seed, std::size_t partition, const Fr& w_inv, const Fr& x,
                     const Fr* weights, const Fr* h, std::size_t lo, std::size_t hi) {
  std::vector<Fr> a(kSumsChunk), b(kSumsChunk);
  std::vector<Fr> t(weights ? 0 : kSumsChunk), prefix(weights ? 0 : kSumsChunk);
  WideSums wide;
  Fr u = weights ? Fr::zero() : x * w_inv.pow(static_cast<std::uint64_t>(lo));
  for (std::size_t begin = lo; begin < hi; begin += kSumsChunk) {
    const std::size_t len = std::min(kSumsChunk, hi - begin);
    hpoly_fill(seed, partition, begin, len, a.data(), b.data(), nullptr);
    const Fr* chunk_t = weights + begin;
    if (!weights) {
      u = weights_chunk<kAdx>(u, w_inv, len, t.data(), prefix.data());
      chunk_t = t.data();
    }
    add_chunk<kAdx>(a.data(), b.data(), chunk_t, len, wide);
  }
  HpolySums s{wide.a.value(), wide.b.value(), wide.c.value(), Fr::zero()};
  if (h == nullptr) return s;
  // h(x) restricted to [lo, hi): Horner, then shifted by x^lo.
  Fr acc = Fr::zero();
  for (std::size_t i = hi; i-- > lo;) acc = mul<kAdx>(acc, x) + h[i];
  s.hx = acc * x.pow(static_cast<std::uint64_t>(lo));
  return s;
}

HpolySums sums(std::uint64_t seed, std::size_t partition, unsigned log_n, std::span<const Fr> h,
               const Fr& x, const Fr* weights, unsigned threads) {
  const std::size_t n = std::size_t{1} << log_n;
  const Fr w_inv = Fr::root_of_unity(log_n).inverse();
  const bool adx = sums_adx_supported();
  std::vector<HpolySums> parts(std::max<std::size_t>(1, kernels::detail::resolve_threads(threads)));
  kernels::detail::parallel_for(
      n, threads,
      [&](std::size_t t, std::size_t lo, std::size_t hi) {
        parts[t] = adx ? sums_range<true>(seed, partition, w_inv, x, weights, h.data(), lo, hi)
                       : sums_range<false>(seed, partition, w_inv, x, weights, h.data(), lo, hi);
      },
      /*grain=*/8192);
  HpolySums s{Fr::zero(), Fr::zero(), Fr::zero(), Fr::zero()};
  for (const auto& p : parts) {
    s.a += p.a;
    s.b += p.b;
    s.c += p.c;
    s.hx += p.hx;
  }
  return s;
}

}  // namespace

HpolySums hpoly_sums(std::uint64_t seed, std::size_t partition, unsigned log_n,
                     std::span<const Fr> h, const Fr& x, unsigned threads) {
  return sums(seed, partition, log_n, h, x, nullptr, threads);
}

HpolySums hpoly_sums(std::uint64_t seed, std::size_t partition, unsigned log_n,
                     std::span<const Fr> h, const Fr& x, std::span<const Fr> weights,
                     unsigned threads) {
  const bool all = weights.size() == std::size_t{1} << log_n;
  return sums(seed, partition, log_n, h, x, all ? weights.data() : nullptr, threads);
}

HpolySums hpoly_sums_range(std::uint64_t seed, std::size_t partition, unsigned log_n, const Fr& x,
                           std::span<const Fr> weights, std::size_t lo, std::size_t hi) {
  const std::size_t n = std::size_t{1} << log_n;
  if (weights.size() != n || lo > hi || hi > n) return HpolySums{};
  const Fr w_inv = Fr::root_of_unity(log_n).inverse();
  return sums_adx_supported()
             ? sums_range<true>(seed, partition, w_inv, x, weights.data(), nullptr, lo, hi)
             : sums_range<false>(seed, partition, w_inv, x, weights.data(), nullptr, lo, hi);
}

void hpoly_weights(const Fr& x, unsigned log_n, std::span<Fr> weights, unsigned threads) {
  const Fr w_inv = Fr::root_of_unity(log_n).inverse();
  const bool adx = sums_adx_supported();
  kernels::detail::parallel_for(
      weights.size(), threads,
      [&](std::size_t lo, std::size_t hi) {
        adx ? hpoly_weights_range<true>(x, w_inv, lo, hi, weights.data())
            : hpoly_weights_range<false>(x, w_inv, lo, hi, weights.data());
      },
      /*grain=*/8192);
}

}  // namespace stoker::engine::workloads

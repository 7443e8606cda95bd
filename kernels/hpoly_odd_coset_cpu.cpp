// snarkjs's roots and the odd-coset H scalars on the CPU, through stoker's
// 7-based transforms (the relation between the two families in
// hpoly_odd_coset.hpp).
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly_odd_coset.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels {
namespace {

// x^((r-1) / 2^32): the 2^32-th root that x gives when x is a non-residue.
Fr to_two_adic_root(const Fr& x) {
  using namespace fr_detail;
  const std::uint64_t t[4] = {(kP0 >> 32) | (kP1 << 32), (kP1 >> 32) | (kP2 << 32),
                              (kP2 >> 32) | (kP3 << 32), kP3 >> 32};
  return x.pow(t);
}

// The discrete logarithm of omega5 to the base omega7 in the group of
// 2^32-th roots, bit by bit (Pohlig-Hellman): with e's low bits known,
// omega5 omega7^-e has order 2^(32 - i) or less, and its 2^(31 - i)-th power
// is 1 exactly when bit i of e is 0.
std::uint32_t discrete_log_of_5() {
  const Fr w5 = to_two_adic_root(Fr::from_u64(5));
  const Fr w7_inv = to_two_adic_root(Fr::generator()).inverse();
  std::uint32_t e = 0;
  for (unsigned i = 0; i < 32; ++i) {
    Fr g = w5 * w7_inv.pow(static_cast<std::uint64_t>(e));
    for (unsigned k = 0; k < 31 - i; ++k) g = g.square();
    if (g != Fr::one()) e |= std::uint32_t{1} << i;
  }
  return e;
}

}  // namespace

Fr snarkjs_root_of_unity(unsigned log_n) {
  Fr w = to_two_adic_root(Fr::from_u64(5));
  for (unsigned i = log_n; i < static_cast<unsigned>(Fr::kTwoAdicity); ++i) w = w.square();
  return w;
}

std::uint32_t snarkjs_root_exponent() {
  static const std::uint32_t e = discrete_log_of_5();
  return e;
}

namespace cpu {

namespace {

// x (evaluations on stoker's domain) becomes the odd-coset evaluations of
// the same polynomial, in place: intt, x_j *= s^j, ntt.
void to_odd_coset(Fr* x, unsigned log_n, unsigned threads) {
  if (log_n == 0) return;  // one point: the polynomial is its value
  const std::size_t n = std::size_t{1} << log_n;
  const Fr s = snarkjs_root_of_unity(log_n + 1);
  transform(NttKind::inverse, x, x, log_n, 1, threads);
  detail::parallel_for(n, threads, [&](std::size_t lo, std::size_t hi) {
    Fr f = s.pow(static_cast<std::uint64_t>(lo));
    for (std::size_t j = lo; j < hi; ++j) {
      x[j] *= f;
      f *= s;
    }
  });
  transform(NttKind::forward, x, x, log_n, 1, threads);
}

// h[i] = A B - C at `at(i)`, after a, b, c were copied to A, B, C with
// entry i at `at(i)` and taken to the odd coset: one pass in, the
// transforms in place, one pass out.
template <typename At>
void odd_coset_h(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n, unsigned threads,
                 At at) {
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<Fr> A(n), B(n), C(n);
  const std::pair<const Fr*, Fr*> steps[] = {{a, A.data()}, {b, B.data()}, {c, C.data()}};
  for (auto [src, dst] : steps) {
    detail::parallel_for(n, threads, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) dst[at(i)] = src[i];
    });
    to_odd_coset(dst, log_n, threads);
  }
  detail::parallel_for(n, threads, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const std::size_t j = at(i);
      h[i] = A[j] * B[j] - C[j];
    }
  });
}

}  // namespace

void hpoly_odd_coset_in_ntt_order(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n,
                                  unsigned threads) {
  if (log_n > kMaxLogN) return;
  odd_coset_h(h, a, b, c, log_n, detail::resolve_threads(threads), [](std::size_t i) { return i; });
}

void hpoly_odd_coset(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n,
                     unsigned threads) {
  if (log_n > kMaxLogN) return;
  odd_coset_h(h, a, b, c, log_n, detail::resolve_threads(threads), SnarkjsToNttIndex(log_n));
}

}  // namespace cpu
}  // namespace stoker::kernels

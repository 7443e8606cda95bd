// A toy key's scalars; see toy_key_scalars.hpp.
#include "engine/groth16/detail/toy_key_scalars.hpp"

#include <algorithm>

#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::engine::groth16::detail {
namespace {

using kernels::Fr;
using kernels::detail::parallel_for;

// Elements per shared inversion: the inversion (~380 products) is 1 % of
// the three products per element it saves, and a range's working space is
// 1 MiB.
constexpr std::size_t kBlock = std::size_t{1} << 14;
// Below this many elements a loop stays on one thread.
constexpr std::size_t kGrain = std::size_t{1} << 12;

// 1 / x for x[0..count) (none zero), with one inversion (Montgomery's
// trick); `prefix` holds count elements of working space.
void invert(Fr* x, std::size_t count, Fr* prefix) {
  Fr acc = Fr::one();
  for (std::size_t i = 0; i < count; ++i) {
    prefix[i] = acc;
    acc *= x[i];
  }
  Fr inv = acc.inverse();
  for (std::size_t i = count; i-- > 0;) {
    const Fr xi = x[i];
    x[i] = inv * prefix[i];
    inv *= xi;
  }
}

// out[i] = scale * L_k(tau) for k = offset + stride * i, i < count, where
// L_k(tau) = w^k (tau^m - 1) / (m (tau - w^k)) is the Lagrange basis of the
// m points w^k.
void lagrange_at(Fr* out, std::size_t count, const Fr& tau, const Fr& w, std::size_t m,
                 std::size_t offset, std::size_t stride, const Fr& scale, unsigned threads) {
  const Fr m_fr = Fr::from_u64(m);
  const Fr factor = (tau.pow(static_cast<std::uint64_t>(m)) - Fr::one()) * scale;
  const Fr first = w.pow(static_cast<std::uint64_t>(offset));
  const Fr step = w.pow(static_cast<std::uint64_t>(stride));
  parallel_for(
      count, threads,
      [&](std::size_t b, std::size_t e) {
        std::vector<Fr> wk(std::min(kBlock, e - b)), prefix(wk.size());
        Fr x = first * step.pow(static_cast<std::uint64_t>(b));
        for (std::size_t at = b; at < e; at += kBlock) {
          const std::size_t len = std::min(kBlock, e - at);
          for (std::size_t i = 0; i < len; ++i, x *= step) {
            wk[i] = x;
            out[at + i] = m_fr * (tau - x);
          }
          invert(out + at, len, prefix.data());
          for (std::size_t i = 0; i < len; ++i) out[at + i] *= wk[i] * factor;
        }
      },
      kGrain);
}

// out[i] = c * tau^i for i < count.
void powers(Fr* out, std::size_t count, const Fr& c, const Fr& tau, unsigned threads) {
  parallel_for(
      count, threads,
      [&](std::size_t b, std::size_t e) {
        Fr t = c * tau.pow(static_cast<std::uint64_t>(b));
        for (std::size_t i = b; i < e; ++i, t *= tau) out[i] = t;
      },
      kGrain);
}

}  // namespace

void add_columns(std::vector<Fr>& out, const std::vector<R1csTerm>& m,
                 const std::vector<Fr>& at_row, unsigned threads) {
  parallel_for(
      out.size(), threads,
      [&](std::size_t b, std::size_t e) {
        for (const auto& t : m)
          if (t.signal >= b && t.signal < e) out[t.signal] += t.value * at_row[t.row];
      },
      kGrain);
}

void add_rows(std::span<Fr> out, const std::vector<R1csTerm>& m, std::span<const Fr> w,
              unsigned threads) {
  parallel_for(
      out.size(), threads,
      [&](std::size_t b, std::size_t e) {
        for (const auto& t : m)
          if (t.row >= b && t.row < e) out[t.row] += t.value * w[t.signal];
      },
      kGrain);
}

std::vector<bool> appears(const std::vector<R1csTerm>& m, std::size_t first, std::size_t count) {
  std::vector<bool> bits(count, false);
  for (const auto& t : m)
    if (t.signal >= first && t.signal < first + count && !t.value.is_zero())
      bits[t.signal - first] = true;
  return bits;
}

ToyKeyQueries::ToyKeyQueries(const R1cs& cs, KeyFormat format)
    : a_aux(cs.num_vars - cs.num_public - 1, true),
      b_in(cs.num_public + 1, true),
      b_aux(cs.num_vars - cs.num_public - 1, true) {
  const std::size_t first_private = cs.num_public + 1, aux = cs.num_vars - first_private;
  if (format == KeyFormat::bellman) {
    a_aux = appears(cs.a, first_private, aux);
    b_in = appears(cs.b, 0, first_private);
    b_aux = appears(cs.b, first_private, aux);
  }
  a = first_private + static_cast<std::size_t>(std::count(a_aux.begin(), a_aux.end(), true));
  b = static_cast<std::size_t>(std::count(b_in.begin(), b_in.end(), true) +
                               std::count(b_aux.begin(), b_aux.end(), true));
}

std::size_t toy_key_scalars_bytes(std::size_t num_vars, std::size_t n) {
  return (3 * num_vars + n) * sizeof(Fr);
}

ToyKeyScalars toy_key_scalars(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                              unsigned log_n, const ToyKeyQueries& q, unsigned threads) {
  const std::size_t n = std::size_t{1} << log_n;
  const bool snarkjs = format == KeyFormat::snarkjs;
  const std::size_t vars = cs.num_vars, first_private = cs.num_public + 1;

  // u, v, w: the A, B and C columns (A with its row per public wire) at tau.
  // Zeroed a vector a thread: first touch of new pages is most of the
  // cost of a large zero fill.
  std::vector<Fr> u, v, w;
  std::vector<Fr>* const uvw[] = {&u, &v, &w};
  parallel_for(
      3, threads,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) uvw[i]->assign(vars, Fr::zero());
      },
      /*grain=*/1);
  {
    const Fr root = snarkjs ? kernels::snarkjs_root_of_unity(log_n) : Fr::root_of_unity(log_n);
    std::vector<Fr> lagrange(n);
    lagrange_at(lagrange.data(), n, sec.tau, root, n, 0, 1, Fr::one(), threads);
    add_columns(u, cs.a, lagrange, threads);
    add_columns(v, cs.b, lagrange, threads);
    add_columns(w, cs.c, lagrange, threads);
    for (std::size_t s = 0; s < first_private; ++s) u[s] += lagrange[cs.num_constraints + s];
  }

  ToyKeyScalars out;
  // (beta u + alpha v + w) / divisor, over w in place.
  const Fr gamma = snarkjs ? Fr::one() : sec.gamma;
  const Fr ic_inv = gamma.inverse(), l_inv = sec.delta.inverse();
  parallel_for(
      vars, threads,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t s = b; s < e; ++s)
          w[s] = (sec.beta * u[s] + sec.alpha * v[s] + w[s]) * (s < first_private ? ic_inv : l_inv);
      },
      kGrain);
  out.ic_l = std::move(w);

  // A and B over their queries' wires, u and v compacted in place.
  std::size_t na = 0, nb = 0;
  for (std::size_t s = 0; s < vars; ++s) {
    const bool in_a = s < first_private || q.a_aux[s - first_private];
    const bool in_b = s < first_private ? q.b_in[s] : q.b_aux[s - first_private];
    if (in_a) u[na++] = u[s];
    if (in_b) v[nb++] = v[s];
  }
  u.resize(na);
  v.resize(nb);
  out.a = std::move(u);
  out.b = std::move(v);

  // snarkjs: L^(2n)_(2i+1)(tau) / delta, the odd coset's Lagrange basis of
  // the 2n-th roots; bellman: tau^i Z(tau) / delta for i < n - 1.
  const Fr delta_inv = sec.delta.inverse();
  if (snarkjs) {
    out.h.resize(n);
    lagrange_at(out.h.data(), n, sec.tau, kernels::snarkjs_root_of_unity(log_n + 1), 2 * n, 1, 2,
                delta_inv, threads);
  } else {
    out.h.resize(n - 1);
    const Fr z = sec.tau.pow(static_cast<std::uint64_t>(n)) - Fr::one();
    powers(out.h.data(), n - 1, z * delta_inv, sec.tau, threads);
  }
  return out;
}

}  // namespace stoker::engine::groth16::detail

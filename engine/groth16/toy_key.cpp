#include "engine/groth16/toy_key.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <random>
#include <string>

#include "common/bytes_str.hpp"
#include "common/host_memory_limit.hpp"
#include "kernels/fixed_base.hpp"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;

// 1 / x for every x (none zero), with one inversion (Montgomery's trick).
void invert_all(std::vector<Fr>& x) {
  std::vector<Fr> prefix(x.size());
  Fr acc = Fr::one();
  for (std::size_t i = 0; i < x.size(); ++i) {
    prefix[i] = acc;
    acc *= x[i];
  }
  Fr inv = acc.inverse();
  for (std::size_t i = x.size(); i-- > 0;) {
    const Fr xi = x[i];
    x[i] = inv * prefix[i];
    inv *= xi;
  }
}

// L_k(tau) = w^k (tau^m - 1) / (m (tau - w^k)) for k < m, the Lagrange basis
// of the m points w^k.
std::vector<Fr> lagrange_at(const Fr& tau, const Fr& w, std::size_t m) {
  std::vector<Fr> den(m), wk(m);
  Fr x = Fr::one();
  const Fr m_fr = Fr::from_u64(m);
  for (std::size_t k = 0; k < m; ++k) {
    wk[k] = x;
    den[k] = m_fr * (tau - x);
    x *= w;
  }
  invert_all(den);
  const Fr z = tau.pow(static_cast<std::uint64_t>(m)) - Fr::one();
  for (std::size_t k = 0; k < m; ++k) den[k] *= wk[k] * z;
  return den;
}

// u, v, w of every wire at tau: the matrices' columns as polynomials.
struct WirePolynomials {
  std::vector<Fr> u, v, w;
};

WirePolynomials wires_at(const R1cs& cs, const std::vector<Fr>& lagrange) {
  WirePolynomials p{std::vector<Fr>(cs.num_vars, Fr::zero()),
                    std::vector<Fr>(cs.num_vars, Fr::zero()),
                    std::vector<Fr>(cs.num_vars, Fr::zero())};
  for (const auto& t : cs.a) p.u[t.signal] += t.value * lagrange[t.row];
  for (const auto& t : cs.b) p.v[t.signal] += t.value * lagrange[t.row];
  for (const auto& t : cs.c) p.w[t.signal] += t.value * lagrange[t.row];
  for (std::size_t s = 0; s <= cs.num_public; ++s) p.u[s] += lagrange[cs.num_constraints + s];
  return p;
}

std::vector<G2Affine> g2_times(const std::vector<Fr>& k, unsigned threads) {
  std::vector<G2Affine> out(k.size());
  kernels::cpu::fixed_base_mul(out.data(), k.data(), k.size(), threads);
  return out;
}

// Many G1 multiples of the generator, one call so the threads share them.
class G1Batch {
 public:
  std::size_t add(const std::vector<Fr>& k) {
    const auto at = scalars_.size();
    scalars_.insert(scalars_.end(), k.begin(), k.end());
    return at;
  }
  void run(unsigned threads) {
    points_.resize(scalars_.size());
    kernels::cpu::fixed_base_mul(points_.data(), scalars_.data(), scalars_.size(), threads);
  }
  std::vector<G1Affine> take(std::size_t at, std::size_t count) const {
    return {points_.begin() + static_cast<std::ptrdiff_t>(at),
            points_.begin() + static_cast<std::ptrdiff_t>(at + count)};
  }

 private:
  std::vector<Fr> scalars_;
  std::vector<G1Affine> points_;
};

std::vector<bool> appears(const std::vector<R1csTerm>& m, std::size_t first, std::size_t count) {
  std::vector<bool> bits(count, false);
  for (const auto& t : m)
    if (t.signal >= first && t.signal < first + count && !t.value.is_zero())
      bits[t.signal - first] = true;
  return bits;
}

// The wires with an A and a B query: every wire in snarkjs's keys; in
// bellman's the public ones (A) and those that appear in the matrix.
struct Queries {
  std::vector<bool> a_aux, b_in, b_aux;
  std::size_t a = 0, b = 0;  // how many
  Queries(const R1cs& cs, bool snarkjs)
      : a_aux(cs.num_vars - cs.num_public - 1, true),
        b_in(cs.num_public + 1, true),
        b_aux(cs.num_vars - cs.num_public - 1, true) {
    const std::size_t first_private = cs.num_public + 1, aux = cs.num_vars - first_private;
    if (!snarkjs) {
      a_aux = appears(cs.a, first_private, aux);
      b_in = appears(cs.b, 0, first_private);
      b_aux = appears(cs.b, first_private, aux);
    }
    a = first_private + static_cast<std::size_t>(std::count(a_aux.begin(), a_aux.end(), true));
    b = static_cast<std::size_t>(std::count(b_in.begin(), b_in.end(), true) +
                                 std::count(b_aux.begin(), b_aux.end(), true));
  }
};

}  // namespace

ToySecrets ToySecrets::from_seed(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto draw = [&rng] {
    for (;;) {
      std::uint64_t v[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
      if (!Fr::is_canonical(v)) continue;
      const Fr x = Fr::from_canonical(v);
      if (!x.is_zero() && x.pow(std::uint64_t{1} << 32) != Fr::one()) return x;
    }
  };
  ToySecrets s;
  s.tau = draw();
  s.alpha = draw();
  s.beta = draw();
  s.gamma = draw();
  s.delta = draw();
  return s;
}

unsigned toy_key_log_n(const R1cs& cs) {
  const std::size_t rows = cs.num_constraints + cs.num_public + 1;
  return static_cast<unsigned>(std::bit_width(rows - 1));
}

namespace {

// The host memory make_toy_key holds at its peak: the G1 points (the L or
// IC query of every wire, A, B and H) twice, in the batch and in the key,
// and their scalars; B in G2; the wires' u, v and w; the Lagrange bases
// (2n of them, with their inverses, for snarkjs's H).
std::size_t toy_key_host_bytes(const R1cs& cs, const Queries& q, std::size_t n) {
  const std::size_t g1 = cs.num_vars + q.a + q.b + n;
  return g1 * (sizeof(Fr) + 2 * sizeof(G1Affine)) + q.b * sizeof(G2Affine) +
         3 * cs.num_vars * sizeof(Fr) + 4 * n * sizeof(Fr);
}

ProvingKey build_toy_key(const R1cs& cs, const ToySecrets& sec, KeyFormat format, unsigned log_n,
                         const Queries& q, unsigned threads) {
  const std::size_t n = std::size_t{1} << log_n;
  const bool snarkjs = format == KeyFormat::snarkjs;
  const Fr gamma = snarkjs ? Fr::one() : sec.gamma;
  const Fr root = snarkjs ? kernels::snarkjs_root_of_unity(log_n) : Fr::root_of_unity(log_n);
  const auto p = wires_at(cs, lagrange_at(sec.tau, root, n));
  const std::size_t np = cs.num_public, vars = cs.num_vars, first_private = np + 1;

  ProvingKey key;
  key.format = format;
  key.log_n = log_n;
  key.num_vars = vars;
  key.num_public = np;

  // (beta u + alpha v + w) / divisor for wires [first, first + count).
  auto combined = [&](std::size_t first, std::size_t count, const Fr& divisor) {
    const Fr inv = divisor.inverse();
    std::vector<Fr> k(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t s = first + i;
      k[i] = (sec.beta * p.u[s] + sec.alpha * p.v[s] + p.w[s]) * inv;
    }
    return k;
  };
  std::vector<Fr> a_k, b_k;
  a_k.reserve(q.a);
  b_k.reserve(q.b);
  for (std::size_t s = 0; s < vars; ++s) {
    const bool in_a = s < first_private || q.a_aux[s - first_private];
    const bool in_b = s < first_private ? q.b_in[s] : q.b_aux[s - first_private];
    if (in_a) a_k.push_back(p.u[s]);
    if (in_b) b_k.push_back(p.v[s]);
  }
  std::vector<Fr> h_k;
  const Fr delta_inv = sec.delta.inverse();
  if (snarkjs) {
    const auto l2n = lagrange_at(sec.tau, kernels::snarkjs_root_of_unity(log_n + 1), 2 * n);
    for (std::size_t i = 0; i < n; ++i) h_k.push_back(l2n[2 * i + 1] * delta_inv);
  } else {
    const Fr z = sec.tau.pow(static_cast<std::uint64_t>(n)) - Fr::one();
    Fr t = z * delta_inv;
    for (std::size_t i = 0; i + 1 < n; ++i, t *= sec.tau) h_k.push_back(t);
  }

  G1Batch g1;
  const auto at_ic = g1.add(combined(0, first_private, gamma));
  const auto at_l = g1.add(combined(first_private, vars - first_private, sec.delta));
  const auto at_a = g1.add(a_k);
  const auto at_b = g1.add(b_k);
  const auto at_h = g1.add(h_k);
  const auto at_vk = g1.add({sec.alpha, sec.beta, sec.delta});
  g1.run(threads);
  key.vk.ic = g1.take(at_ic, first_private);
  key.l = g1.take(at_l, vars - first_private);
  key.a = g1.take(at_a, a_k.size());
  key.b_g1 = g1.take(at_b, b_k.size());
  key.h = g1.take(at_h, h_k.size());
  const auto vk1 = g1.take(at_vk, 3);
  key.vk.alpha_1 = vk1[0];
  key.beta_1 = vk1[1];
  key.delta_1 = vk1[2];
  key.b_g2 = g2_times(b_k, threads);
  const auto vk2 = g2_times({sec.beta, gamma, sec.delta}, threads);
  key.vk.beta_2 = vk2[0];
  key.vk.gamma_2 = vk2[1];
  key.vk.delta_2 = vk2[2];

  if (snarkjs) {
    for (const auto& t : cs.a) key.coefficients.push_back({0, t.row, t.signal, t.value});
    for (const auto& t : cs.b) key.coefficients.push_back({1, t.row, t.signal, t.value});
    for (std::size_t s = 0; s <= np; ++s)
      key.coefficients.push_back({0, static_cast<std::uint32_t>(cs.num_constraints + s),
                                  static_cast<std::uint32_t>(s), Fr::one()});
  }
  return key;
}

}  // namespace

Result<ProvingKey> make_toy_key(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                                unsigned log_n, unsigned threads) {
  if (log_n == 0) log_n = toy_key_log_n(cs);
  const std::size_t n = std::size_t{1} << log_n;
  if (cs.num_constraints + cs.num_public + 1 > n || log_n > 31)
    return Error{Errc::invalid_argument,
                 "a domain of 2^" + std::to_string(log_n) + " points cannot hold " +
                     std::to_string(cs.num_constraints) + " constraints and " +
                     std::to_string(cs.num_public + 1) + " public rows"};
  const std::string what = "a toy key of 2^" + std::to_string(log_n) + " points";
  try {
    const Queries q(cs, format == KeyFormat::snarkjs);
    const std::size_t need = toy_key_host_bytes(cs, q, n);
    if (Error e = common::check_host_memory(what, need)) return e;
    try {
      return build_toy_key(cs, sec, format, log_n, q, threads);
    } catch (const std::bad_alloc&) {
      return common::host_memory_refused(what + ", " + common::bytes_with_units(need) + " in all");
    }
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what);
  }
}

BellmanWitness synthesize_bellman(const R1cs& cs, const std::vector<Fr>& w, unsigned log_n) {
  const std::size_t n = std::size_t{1} << log_n, first_private = cs.num_public + 1;
  BellmanWitness out;
  out.a.assign(n, Fr::zero());
  out.b.assign(n, Fr::zero());
  out.c.assign(n, Fr::zero());
  for (const auto& t : cs.a) out.a[t.row] += t.value * w[t.signal];
  for (const auto& t : cs.b) out.b[t.row] += t.value * w[t.signal];
  for (const auto& t : cs.c) out.c[t.row] += t.value * w[t.signal];
  for (std::size_t s = 0; s < first_private; ++s) out.a[cs.num_constraints + s] = w[s];
  out.inputs.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(first_private));
  out.aux.assign(w.begin() + static_cast<std::ptrdiff_t>(first_private), w.end());
  out.a_aux_density = appears(cs.a, first_private, out.aux.size());
  out.b_input_density = appears(cs.b, 0, first_private);
  out.b_aux_density = appears(cs.b, first_private, out.aux.size());
  return out;
}

}  // namespace stoker::engine::groth16

#include "engine/groth16/toy_circuit.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;

Fr random_fr(std::mt19937_64& rng) {
  for (;;) {
    std::uint64_t v[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
    if (Fr::is_canonical(v)) return Fr::from_canonical(v);
  }
}

std::vector<Fr> rows_times(const std::vector<R1csTerm>& m, std::span<const Fr> w,
                           std::size_t rows) {
  std::vector<Fr> out(rows, Fr::zero());
  for (const auto& t : m)
    if (t.row < rows) out[t.row] += t.value * w[t.signal];
  return out;
}

}  // namespace

namespace {

struct Layout {
  std::size_t np, rows, gates, inputs;
};

Layout layout_of(const ToyCircuitShape& shape) {
  Layout l;
  l.np = shape.num_public;
  l.rows = shape.constraints > l.np ? shape.constraints - l.np : 1;
  // With every private wire bound, rows = gates + inputs + gates.
  l.gates = shape.bind_every_wire ? std::max<std::size_t>(1, l.rows * 4 / 9) : l.rows;
  l.inputs = std::max<std::size_t>(2, l.gates / 4);
  return l;
}

}  // namespace

std::size_t ToyCircuitCounts::bytes() const {
  return vars * sizeof(Fr) + (a_terms + b_terms + c_terms) * sizeof(R1csTerm);
}

ToyCircuitCounts toy_circuit_counts(const ToyCircuitShape& shape) {
  const Layout l = layout_of(shape);
  const std::size_t rows = l.np + (shape.bind_every_wire ? l.rows : l.gates);
  const auto second =
      l.gates / 8 + static_cast<std::size_t>(8 * std::sqrt(static_cast<double>(l.gates)) + 64);
  return {.vars = 1 + l.np + l.inputs + l.gates,
          .a_terms = rows + second,
          .b_terms = rows,
          .c_terms = rows};
}

ToyCircuit make_toy_circuit(const ToyCircuitShape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto [np, rows, gates, inputs] = layout_of(shape);

  ToyCircuit out;
  R1cs& cs = out.r1cs;
  auto& w = out.witness;
  cs.num_public = np;
  cs.num_constraints = np + gates;
  const ToyCircuitCounts counts = toy_circuit_counts(shape);
  w.reserve(counts.vars);
  cs.a.reserve(counts.a_terms);
  cs.b.reserve(counts.b_terms);
  cs.c.reserve(counts.c_terms);
  w.push_back(Fr::one());
  for (std::size_t i = 0; i < np; ++i) w.push_back(random_fr(rng));
  for (std::size_t i = 0; i < inputs; ++i) {
    const double u = unit(rng);
    w.push_back(u < shape.zeros                ? Fr::zero()
                : u < shape.zeros + shape.ones ? Fr::one()
                                               : random_fr(rng));
  }
  std::uint32_t row = 0;
  for (std::size_t i = 0; i < np; ++i, ++row) {  // p * 1 = p
    const auto p = static_cast<std::uint32_t>(1 + i);
    cs.a.push_back({row, p, Fr::one()});
    cs.b.push_back({row, 0, Fr::one()});
    cs.c.push_back({row, p, Fr::one()});
  }
  const std::size_t first_private = 1 + np;
  // B operands: the private wires w with (w * 2654435761) mod 2^32 below
  // b_share of 2^32, a fixed pseudo-random share of them.
  const auto b_limit =
      static_cast<std::uint64_t>(std::clamp(shape.b_share, 0.0, 1.0) * 4294967296.0);
  auto in_b_share = [b_limit](std::size_t wire) {
    return ((wire * 2654435761ull) & 0xffffffffull) < b_limit;
  };
  // The private wires by value (0, 1, full-size), all and those in B's
  // share, for gates that keep the mix.
  std::vector<std::uint32_t> by_value[3], b_by_value[3];
  auto value_class = [&w](std::size_t v) { return w[v].is_zero() ? 0 : w[v] == Fr::one() ? 1 : 2; };
  auto file = [&](std::size_t v) {
    const int c = value_class(v);
    by_value[c].push_back(static_cast<std::uint32_t>(v));
    if (in_b_share(v)) b_by_value[c].push_back(static_cast<std::uint32_t>(v));
  };
  if (shape.keep_mix)
    for (std::size_t v = first_private; v < w.size(); ++v) file(v);
  auto any_of = [&rng](const std::vector<std::uint32_t>& pool) {
    return pool[static_cast<std::size_t>(rng() % pool.size())];
  };
  for (std::size_t g = 0; g < gates; ++g, ++row) {
    std::uniform_int_distribution<std::size_t> earlier(first_private, w.size() - 1);
    std::uint32_t x = 0, y = 0;
    // Keeping the mix: a gate's value class drawn as the inputs' were; a
    // 0 from a 0 times anything, a 1 from 1 * 1, a full-size value from
    // one times 1.
    const double u = shape.keep_mix ? unit(rng) : 0.0;
    const int want = u < shape.zeros ? 0 : u < shape.zeros + shape.ones ? 1 : 2;
    const auto& b_pool = b_by_value[shape.keep_mix && want == 0 ? rng() % 3 : 1];
    if (shape.keep_mix && !by_value[want].empty() && !b_pool.empty()) {
      x = any_of(by_value[want]);
      y = any_of(b_pool);
    } else {
      x = static_cast<std::uint32_t>(earlier(rng));
      std::size_t pick = earlier(rng);
      for (int tries = 0; tries < 64 && !in_b_share(pick); ++tries) pick = earlier(rng);
      y = static_cast<std::uint32_t>(pick);
    }
    Fr left = w[x];
    cs.a.push_back({row, x, Fr::one()});
    if (rng() % 8 == 0) {  // a second term with a coefficient, on a public wire now and then
      // (keeping the mix: on a wire of value 0, which leaves the value alone)
      const auto x2 =
          static_cast<std::uint32_t>(shape.keep_mix && !by_value[0].empty() ? any_of(by_value[0])
                                     : rng() % 4 == 0                       ? rng() % (np + 1)
                                                                            : earlier(rng));
      const Fr k = Fr::from_u64(2 + rng() % 1000);
      cs.a.push_back({row, x2, k});
      left += k * w[x2];
    }
    cs.b.push_back({row, y, Fr::one()});
    const auto z = static_cast<std::uint32_t>(w.size());
    w.push_back(left * w[y]);
    cs.c.push_back({row, z, Fr::one()});
    if (shape.keep_mix) file(z);
  }
  if (shape.bind_every_wire)
    for (std::size_t v = first_private; v < w.size() && row < np + rows; ++v, ++row) {
      const auto s = static_cast<std::uint32_t>(v);  // w * 1 = w
      cs.a.push_back({row, s, Fr::one()});
      cs.b.push_back({row, 0, Fr::one()});
      cs.c.push_back({row, s, Fr::one()});
    }
  cs.num_constraints = row;
  cs.num_vars = w.size();
  return out;
}

ToyCircuitShape porep_shape(unsigned log_n) {
  ToyCircuitShape s;
  s.num_public = 328;
  s.constraints = (std::size_t{1} << log_n) - s.num_public - 1;
  s.zeros = 0.4;
  s.ones = 0.5;
  s.b_share = 0.33;
  s.bind_every_wire = true;
  s.keep_mix = true;
  return s;
}

bool is_satisfied(const R1cs& cs, std::span<const Fr> w) {
  if (w.size() != cs.num_vars) return false;
  const auto a = rows_times(cs.a, w, cs.num_constraints);
  const auto b = rows_times(cs.b, w, cs.num_constraints);
  const auto c = rows_times(cs.c, w, cs.num_constraints);
  for (std::size_t i = 0; i < cs.num_constraints; ++i)
    if (a[i] * b[i] != c[i]) return false;
  return true;
}

}  // namespace stoker::engine::groth16

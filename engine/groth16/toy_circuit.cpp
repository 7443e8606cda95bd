#include "engine/groth16/toy_circuit.hpp"

#include <algorithm>
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

std::vector<Fr> rows_times(const std::vector<R1csTerm>& m, const std::vector<Fr>& w,
                           std::size_t rows) {
  std::vector<Fr> out(rows, Fr::zero());
  for (const auto& t : m)
    if (t.row < rows) out[t.row] += t.value * w[t.signal];
  return out;
}

}  // namespace

ToyCircuit make_toy_circuit(const ToyCircuitShape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::size_t np = shape.num_public;
  const std::size_t gates = shape.constraints > np ? shape.constraints - np : 1;
  const std::size_t inputs = std::max<std::size_t>(2, gates / 4);

  ToyCircuit out;
  R1cs& cs = out.r1cs;
  auto& w = out.witness;
  cs.num_public = np;
  cs.num_constraints = np + gates;
  w.reserve(1 + np + inputs + gates);
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
  for (std::size_t g = 0; g < gates; ++g, ++row) {
    std::uniform_int_distribution<std::size_t> earlier(first_private, w.size() - 1);
    const auto x = static_cast<std::uint32_t>(earlier(rng));
    const auto y = static_cast<std::uint32_t>(earlier(rng));
    Fr left = w[x];
    cs.a.push_back({row, x, Fr::one()});
    if (rng() % 8 == 0) {  // a second term with a coefficient, on a public wire now and then
      const auto x2 = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() % (np + 1) : earlier(rng));
      const Fr k = Fr::from_u64(2 + rng() % 1000);
      cs.a.push_back({row, x2, k});
      left += k * w[x2];
    }
    cs.b.push_back({row, y, Fr::one()});
    const auto z = static_cast<std::uint32_t>(w.size());
    w.push_back(left * w[y]);
    cs.c.push_back({row, z, Fr::one()});
  }
  cs.num_vars = w.size();
  return out;
}

bool is_satisfied(const R1cs& cs, const std::vector<Fr>& w) {
  if (w.size() != cs.num_vars) return false;
  const auto a = rows_times(cs.a, w, cs.num_constraints);
  const auto b = rows_times(cs.b, w, cs.num_constraints);
  const auto c = rows_times(cs.c, w, cs.num_constraints);
  for (std::size_t i = 0; i < cs.num_constraints; ++i)
    if (a[i] * b[i] != c[i]) return false;
  return true;
}

}  // namespace stoker::engine::groth16

#include "engine/groth16/toy_key.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <new>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "common/bytes_str.hpp"
#include "common/host_memory_limit.hpp"
#include "common/start_thread.hpp"
#include "engine/groth16/detail/toy_key_scalars.hpp"
#include "engine/groth16/fixed_base_on_gpu.hpp"
#include "kernels/fixed_base.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;

// The key's points from their scalars: on the CPU, or on every GPU named, a
// contiguous share of every task each (one thread per GPU, the first on the
// calling thread).
Error make_points(std::span<const FixedBaseTask<G1Affine>> g1,
                  std::span<const FixedBaseTask<G2Affine>> g2, const ToyKeyOptions& o) {
  if (o.cuda_ordinals.empty()) {
    for (const auto& t : g1)
      kernels::cpu::fixed_base_mul(t.out.data(), t.scalars.data(), t.out.size(), o.threads);
    for (const auto& t : g2)
      kernels::cpu::fixed_base_mul(t.out.data(), t.scalars.data(), t.out.size(), o.threads);
    return {};
  }
  const std::size_t gpus = o.cuda_ordinals.size();
  const auto share = [gpus](const auto& tasks, std::size_t g) {
    std::vector<std::decay_t<decltype(tasks[0])>> out;
    for (const auto& t : tasks) {
      const std::size_t b = t.out.size() * g / gpus, e = t.out.size() * (g + 1) / gpus;
      out.push_back({t.out.subspan(b, e - b), t.scalars.subspan(b, e - b), {}});
    }
    return out;
  };
  std::vector<Error> errors(gpus);
  const auto run = [&](std::size_t g) {
    try {
      const auto mine1 = share(g1, g);
      errors[g] = fixed_base_on_gpu<G1Affine>(o.cuda_ordinals[g], mine1, "toy key");
      if (errors[g]) return;
      const auto mine2 = share(g2, g);
      errors[g] = fixed_base_on_gpu<G2Affine>(o.cuda_ordinals[g], mine2, "toy key");
    } catch (const std::bad_alloc&) {
      errors[g] = common::host_memory_refused("toy key: the shares of GPU " +
                                              std::to_string(o.cuda_ordinals[g]));
    }
  };
  std::vector<std::thread> threads;
  std::vector<std::size_t> refused;  // their shares run here after the first
  for (std::size_t g = 1; g < gpus; ++g) {
    std::thread th;
    if (common::start_thread(th,
                             "a toy key thread (GPU " + std::to_string(o.cuda_ordinals[g]) + ")",
                             [&run, g] { run(g); }))
      refused.push_back(g);
    else
      threads.push_back(std::move(th));
  }
  run(0);
  for (std::size_t g : refused) run(g);
  for (auto& th : threads) th.join();
  for (auto& e : errors)
    if (e) return std::move(e);
  return {};
}

// What the key holds and make_toy_key takes at its peak: the points, then
// the scalars beside them (freed before the snarkjs matrix entries are
// made), and each GPU's pinned buffers (a G1 chunk, more than G2's).
struct KeySize {
  std::size_t num_vars = 0, a = 0, b = 0, n = 0, coefficients = 0;
  bool snarkjs = true;
  std::size_t h() const { return snarkjs ? n : n - 1; }
  std::size_t point_bytes() const {
    return (num_vars + a + b + h()) * sizeof(G1Affine) + b * sizeof(G2Affine);
  }
  std::size_t peak_bytes(std::size_t gpus) const {
    const std::size_t largest = std::max(num_vars, h());
    const std::size_t pinned = fixed_base_on_gpu_host_bytes(sizeof(G1Affine), largest, true);
    return point_bytes() +
           std::max(detail::toy_key_scalars_bytes(num_vars, n),
                    coefficients * sizeof(MatrixEntry)) +
           gpus * pinned;
  }
};

KeySize key_size(const R1cs& cs, KeyFormat format, unsigned log_n, const detail::ToyKeyQueries& q) {
  const bool snarkjs = format == KeyFormat::snarkjs;
  return {cs.num_vars,
          q.a,
          q.b,
          std::size_t{1} << log_n,
          snarkjs ? cs.a.size() + cs.b.size() + cs.num_public + 1 : 0,
          snarkjs};
}

Result<ProvingKey> build_toy_key(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                                 unsigned log_n, const detail::ToyKeyQueries& q,
                                 const ToyKeyOptions& o) {
  const bool snarkjs = format == KeyFormat::snarkjs;
  const Fr gamma = snarkjs ? Fr::one() : sec.gamma;
  const std::size_t np = cs.num_public, vars = cs.num_vars, first_private = np + 1;

  ProvingKey key;
  key.format = format;
  key.log_n = log_n;
  key.num_vars = vars;
  key.num_public = np;
  {
    const auto k = detail::toy_key_scalars(cs, sec, format, log_n, q, o.threads);
    // The points straight into the key's vectors, sized without a write
    // (PointVector): their pages are first touched where the points land.
    key.vk.ic.resize(first_private);
    key.l.resize(vars - first_private);
    key.a.resize(k.a.size());
    key.b_g1.resize(k.b.size());
    key.h.resize(k.h.size());
    key.b_g2.resize(k.b.size());
    const std::span<const Fr> ic_l(k.ic_l);
    const FixedBaseTask<G1Affine> g1[] = {{key.vk.ic, ic_l.first(first_private), {}},
                                          {key.l, ic_l.subspan(first_private), {}},
                                          {key.a, k.a, {}},
                                          {key.b_g1, k.b, {}},
                                          {key.h, k.h, {}}};
    const FixedBaseTask<G2Affine> g2[] = {{key.b_g2, k.b, {}}};
    if (Error e = make_points(g1, g2, o)) return e;
  }
  const Fr vk[3] = {sec.alpha, sec.beta, sec.delta}, vk2[3] = {sec.beta, gamma, sec.delta};
  G1Affine p1[3];
  G2Affine p2[3];
  kernels::cpu::fixed_base_mul(p1, vk, 3, 1);
  kernels::cpu::fixed_base_mul(p2, vk2, 3, 1);
  key.vk.alpha_1 = p1[0];
  key.beta_1 = p1[1];
  key.delta_1 = p1[2];
  key.vk.beta_2 = p2[0];
  key.vk.gamma_2 = p2[1];
  key.vk.delta_2 = p2[2];

  if (snarkjs) {
    key.coefficients.reserve(cs.a.size() + cs.b.size() + np + 1);
    for (const auto& t : cs.a) key.coefficients.push_back({0, t.row, t.signal, t.value});
    for (const auto& t : cs.b) key.coefficients.push_back({1, t.row, t.signal, t.value});
    for (std::size_t s = 0; s <= np; ++s)
      key.coefficients.push_back({0, static_cast<std::uint32_t>(cs.num_constraints + s),
                                  static_cast<std::uint32_t>(s), Fr::one()});
  }
  return key;
}

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

Result<ProvingKey> make_toy_key(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                                const ToyKeyOptions& options) {
  const unsigned log_n = options.log_n ? options.log_n : toy_key_log_n(cs);
  if (log_n > 31 || cs.num_constraints + cs.num_public + 1 > (std::size_t{1} << log_n))
    return Error{Errc::invalid_argument,
                 "a domain of 2^" + std::to_string(log_n) + " points cannot hold " +
                     std::to_string(cs.num_constraints) + " constraints and " +
                     std::to_string(cs.num_public + 1) + " public rows"};
  const std::string what = "a toy key of 2^" + std::to_string(log_n) + " points";
  try {
    const detail::ToyKeyQueries q(cs, format);
    const std::size_t need =
        key_size(cs, format, log_n, q).peak_bytes(options.cuda_ordinals.size());
    if (Error e = common::check_host_memory(what, need)) return e;
    try {
      return build_toy_key(cs, sec, format, log_n, q, options);
    } catch (const std::bad_alloc&) {
      return common::host_memory_refused(what + ", " + common::bytes_with_units(need) + " in all");
    }
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what);
  }
}

Result<ProvingKey> make_toy_key(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                                unsigned log_n, unsigned threads) {
  return make_toy_key(cs, sec, format, ToyKeyOptions{log_n, threads, {}});
}

std::size_t toy_key_host_bytes(const R1cs& cs, KeyFormat format, unsigned log_n, std::size_t gpus) {
  return key_size(cs, format, log_n, detail::ToyKeyQueries(cs, format)).peak_bytes(gpus);
}

std::size_t toy_setup_host_bytes(const ToyCircuitShape& shape, KeyFormat format, unsigned log_n,
                                 std::size_t gpus) {
  const ToyCircuitCounts counts = toy_circuit_counts(shape);
  const std::size_t np = shape.num_public, vars = counts.vars;
  const std::size_t a_terms = counts.a_terms, b_terms = counts.b_terms;
  const std::size_t circuit = counts.bytes();
  const bool snarkjs = format == KeyFormat::snarkjs;
  const KeySize key{
      vars, vars, vars, std::size_t{1} << log_n, snarkjs ? a_terms + b_terms + np + 1 : 0, snarkjs};
  // bellman: the prover's a, b, c over the domain and the witness again.
  const std::size_t synthesis = snarkjs ? 0 : (3 * key.n + vars) * sizeof(Fr) + vars;
  return circuit + std::max(key.peak_bytes(gpus), key.point_bytes() + synthesis);
}

BellmanWitness synthesize_bellman(const R1cs& cs, std::span<const Fr> w, unsigned log_n,
                                  unsigned threads) {
  const std::size_t n = std::size_t{1} << log_n, first_private = cs.num_public + 1;
  BellmanWitness out;
  out.a.assign(n, Fr::zero());
  out.b.assign(n, Fr::zero());
  out.c.assign(n, Fr::zero());
  detail::add_rows(out.a, cs.a, w, threads);
  detail::add_rows(out.b, cs.b, w, threads);
  detail::add_rows(out.c, cs.c, w, threads);
  for (std::size_t s = 0; s < first_private; ++s) out.a[cs.num_constraints + s] = w[s];
  out.inputs.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(first_private));
  out.aux.assign(w.begin() + static_cast<std::ptrdiff_t>(first_private), w.end());
  out.a_aux_density = detail::appears(cs.a, first_private, out.aux.size());
  out.b_input_density = detail::appears(cs.b, 0, first_private);
  out.b_aux_density = detail::appears(cs.b, first_private, out.aux.size());
  return out;
}

}  // namespace stoker::engine::groth16

#include "engine/groth16/cpu_prover.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/proof_assembly.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/hpoly_odd_coset.hpp"
#include "kernels/msm.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;

// Runs prove() -> Result<Proof> after checking `need`, the host memory of
// the proof's own buffers, against the host's limit; an allocation the
// system refuses anyway (those buffers, the kernels' own) is an Error that
// names the proof and the limit, never a std::bad_alloc out of a prover.
template <typename Prove>
Result<Proof> within_host_memory(const ProvingKey& key, std::size_t need, Prove&& prove) {
  const std::string what = "a proof over 2^" + std::to_string(key.log_n) + " points";
  if (Error e = common::check_host_memory(what, need)) return e;
  try {
    return prove();
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what);
  }
}

Error count_error(const std::string& what, std::size_t have, std::size_t want) {
  return Error{Errc::invalid_argument,
               what + " holds " + std::to_string(have) + ", the key wants " + std::to_string(want)};
}

Result<Proof> finished(const ProvingKey& key, const QuerySums& sums, const ProofRandomness& rnd,
                       std::span<const Fr> inputs, const CpuProverOptions& options) {
  const Proof proof = assemble_proof(key, sums, rnd);
  if (!options.verify) return proof;
  return checked_proof(key, proof, inputs);
}

std::size_t popcount(const std::vector<bool>& bits) {
  return static_cast<std::size_t>(std::count(bits.begin(), bits.end(), true));
}

}  // namespace

Error check_witness(const ProvingKey& key, const QueryCounts& q, std::span<const Fr> w) {
  if (key.format != KeyFormat::snarkjs)
    return Error{Errc::invalid_argument, "a bellman key proves from an assignment, not a witness"};
  const std::size_t n = key.domain_size(), vars = key.num_vars;
  if (w.size() != vars) return count_error("the witness", w.size(), vars);
  if (w[0] != Fr::one())
    return Error{Errc::invalid_argument, "the witness's first value (the constant wire) is not 1"};
  if (q.a != vars || q.b_g1 != vars || q.b_g2 != vars || q.l != key.num_private() || q.h != n)
    return Error{Errc::invalid_argument, "the proving key's queries do not match its header"};
  return {};
}

Error check_assignment(const ProvingKey& key, const QueryCounts& q, const BellmanAssignment& in) {
  if (key.format != KeyFormat::bellman)
    return Error{Errc::invalid_argument, "a snarkjs key proves from a witness, not an assignment"};
  const std::size_t n = key.domain_size();
  if (in.a.size() != n || in.b.size() != n || in.c.size() != n)
    return Error{Errc::invalid_argument,
                 "a, b and c must hold the domain's " + std::to_string(n) + " evaluations each"};
  if (in.inputs.size() != key.num_public + 1)
    return count_error("the input assignment", in.inputs.size(), key.num_public + 1);
  if (in.inputs[0] != Fr::one())
    return Error{Errc::invalid_argument, "the first input (the constant wire) is not 1"};
  if (in.aux.size() != key.num_private())
    return count_error("the aux assignment", in.aux.size(), key.num_private());
  if (in.a_aux_density.size() != in.aux.size() || in.b_aux_density.size() != in.aux.size() ||
      in.b_input_density.size() != in.inputs.size())
    return Error{Errc::invalid_argument,
                 "the density bit vectors must have one bit per input or aux wire"};
  const std::size_t a_count = in.inputs.size() + popcount(in.a_aux_density);
  const std::size_t b_count = popcount(in.b_input_density) + popcount(in.b_aux_density);
  if (q.a != a_count) return count_error("the A query", q.a, a_count);
  if (q.b_g1 != b_count || q.b_g2 != b_count) return count_error("the B queries", q.b_g1, b_count);
  if (q.l != in.aux.size()) return count_error("the L query", q.l, in.aux.size());
  if (q.h != n - 1) return count_error("the H query", q.h, n - 1);
  return {};
}

Result<Proof> prove_cpu(const ProvingKey& key, const ConstraintMatrices& matrices,
                        std::span<const Fr> w, const ProofRandomness& randomness,
                        const CpuProverOptions& options) {
  if (auto e = check_witness(key, w)) return e;
  const std::size_t n = key.domain_size(), vars = key.num_vars;
  if (matrices.rows() != n || matrices.wires() != vars)
    return Error{Errc::invalid_argument, "the constraint matrices are another key's"};
  const unsigned threads = options.threads;
  // a, b, c and h.
  return within_host_memory(key, 4 * n * sizeof(Fr), [&]() -> Result<Proof> {
    std::vector<Fr> a(n), b(n), c(n), h(n);
    if (auto e = matrices.evaluate(w, a, b, c, threads)) return e;
    kernels::cpu::hpoly_odd_coset(h.data(), a.data(), b.data(), c.data(), key.log_n, threads);

    QuerySums sums;
    sums.a = kernels::cpu::msm(key.a.data(), w.data(), vars, threads);
    sums.b1 = kernels::cpu::msm(key.b_g1.data(), w.data(), vars, threads);
    sums.b2 = kernels::cpu::msm(key.b_g2.data(), w.data(), vars, threads);
    const std::size_t first_private = key.num_public + 1;
    sums.c =
        kernels::cpu::msm(key.l.data(), w.data() + first_private, vars - first_private, threads);
    kernels::add(sums.c, kernels::cpu::msm(key.h.data(), h.data(), n, threads));
    return finished(key, sums, randomness, w.subspan(1, key.num_public), options);
  });
}

Result<Proof> prove_cpu(const ProvingKey& key, const BellmanAssignment& in,
                        const ProofRandomness& randomness, const CpuProverOptions& options) {
  if (auto e = check_assignment(key, in)) return e;
  const std::size_t n = key.domain_size();
  const std::size_t a_count = key.a.size(), b_count = key.b_g1.size();
  const unsigned threads = options.threads;
  // h and the A and B queries' scalars.
  return within_host_memory(key, (n + a_count + b_count) * sizeof(Fr), [&]() -> Result<Proof> {
    std::vector<Fr> h(n);
    kernels::cpu::hpoly(h.data(), in.a.data(), in.b.data(), in.c.data(), key.log_n, threads);

    const auto scalars = query_scalars(in);
    const auto& a_scalars = scalars.a;
    const auto& b_scalars = scalars.b;

    QuerySums sums;
    sums.a = kernels::cpu::msm(key.a.data(), a_scalars.data(), a_count, threads);
    sums.b1 = kernels::cpu::msm(key.b_g1.data(), b_scalars.data(), b_count, threads);
    sums.b2 = kernels::cpu::msm(key.b_g2.data(), b_scalars.data(), b_count, threads);
    sums.c = kernels::cpu::msm(key.l.data(), in.aux.data(), in.aux.size(), threads);
    kernels::add(sums.c, kernels::cpu::msm(key.h.data(), h.data(), n - 1, threads));
    return finished(key, sums, randomness, in.inputs.subspan(1), options);
  });
}

}  // namespace stoker::engine::groth16

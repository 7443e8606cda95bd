#include "engine/groth16/proof_assembly.hpp"

#include "engine/groth16/verifier.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Xyzz;
using kernels::G2Xyzz;

template <typename Affine>
auto times(const Affine& p, const Fr& k) {
  std::uint64_t limbs[4];
  k.to_canonical(limbs);
  return kernels::scalar_mul(p, limbs);
}

}  // namespace

Proof assemble_proof(const ProvingKey& key, const QuerySums& sums, const ProofRandomness& rnd) {
  G1Xyzz a = kernels::to_xyzz(key.vk.alpha_1);
  kernels::add(a, sums.a);
  kernels::add(a, times(key.delta_1, rnd.r));
  G2Xyzz b = kernels::to_xyzz(key.vk.beta_2);
  kernels::add(b, sums.b2);
  kernels::add(b, times(key.vk.delta_2, rnd.s));
  G1Xyzz b1 = kernels::to_xyzz(key.beta_1);
  kernels::add(b1, sums.b1);
  kernels::add(b1, times(key.delta_1, rnd.s));
  G1Xyzz c = sums.c;
  kernels::add(c, times(kernels::to_affine(a), rnd.s));
  kernels::add(c, times(kernels::to_affine(b1), rnd.r));
  kernels::add(c, kernels::neg(times(key.delta_1, rnd.r * rnd.s)));
  return Proof{kernels::to_affine(a), kernels::to_affine(b), kernels::to_affine(c)};
}

Result<Proof> checked_proof(const ProvingKey& key, const Proof& proof, std::span<const Fr> inputs) {
  if (auto e = verify(key.vk, proof, inputs)) {
    if (e.code != make_error_code(Errc::verification_failed)) return e;
    return Error{Errc::verification_failed,
                 "the witness does not satisfy the key's circuit: its proof fails the pairing "
                 "check (or the key's points or coefficients are not those of its verifying "
                 "key: a damaged key, or one trusted unchecked)"};
  }
  return proof;
}

}  // namespace stoker::engine::groth16

#include "engine/groth16/verifier.hpp"

#include <string>

#include "kernels/msm.hpp"
#include "kernels/pairing.hpp"

namespace stoker::engine::groth16 {

Error verify(const VerifyingKey& vk, const Proof& proof, std::span<const kernels::Fr> inputs) {
  if (vk.ic.empty() || inputs.size() != vk.ic.size() - 1)
    return Error{Errc::invalid_argument, std::to_string(inputs.size()) + " public input" +
                                             (inputs.size() == 1 ? "" : "s") +
                                             " given; the verifying key takes " +
                                             std::to_string(vk.ic.empty() ? 0 : vk.ic.size() - 1)};
  kernels::G1Xyzz acc = kernels::to_xyzz(vk.ic[0]);
  if (!inputs.empty())
    kernels::add(acc, kernels::cpu::msm(vk.ic.data() + 1, inputs.data(), inputs.size(), 1));
  const kernels::PairingTerm terms[] = {
      {kernels::neg(proof.a), proof.b},
      {vk.alpha_1, vk.beta_2},
      {kernels::to_affine(acc), vk.gamma_2},
      {proof.c, vk.delta_2},
  };
  if (!kernels::cpu::pairing_product_is_one(terms))
    return Error{Errc::verification_failed,
                 "the proof does not verify: e(A, B) != e(alpha, beta) e(IC, gamma) e(C, delta) "
                 "for these public inputs"};
  return {};
}

}  // namespace stoker::engine::groth16

// The blinding scalars r and s of one Groth16 proof. They are what makes a
// proof zero-knowledge: whoever learns them for a proof can extract the
// witness from it, so they come from the operating system's CSPRNG, fresh
// per proof. fixed_for_tests() is the only other way to make them and says
// so in its name (byte-for-byte comparisons between provers need it).
#pragma once

#include "common/error.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

struct ProofRandomness {
  kernels::Fr r, s;

  // Uniform over [0, r) each, from getrandom(2); an error only when the
  // kernel refuses (it names the errno).
  static Result<ProofRandomness> from_os();
  // Fixed values: proofs that verify but are not zero-knowledge. Tests only.
  static ProofRandomness fixed_for_tests(const kernels::Fr& r, const kernels::Fr& s) {
    return ProofRandomness{r, s};
  }
};

}  // namespace stoker::engine::groth16

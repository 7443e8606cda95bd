// A Groth16 proof over BLS12-381: the three points the prover outputs and
// the verifier pairs, A and C in G1, B in G2, affine in Montgomery form
// (the kernels' types; the point at infinity is all zeros).
//
// Its binary form is bellman's / bellperson's 192 bytes: A compressed (48)
// || B compressed (96) || C compressed (48), zcash encoding
// (kernels/g1_encoding.hpp, g2_encoding.hpp). The JSON form snarkjs writes
// is in snarkjs_json.hpp.
#pragma once

#include <cstddef>
#include <span>

#include "common/error.hpp"
#include "engine/groth16/point_check.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::engine::groth16 {

struct Proof {
  kernels::G1Affine a;
  kernels::G2Affine b;
  kernels::G1Affine c;
};

inline constexpr std::size_t kProofBytes = 192;

void encode_proof_bytes(const Proof& proof, std::span<unsigned char, kProofBytes> out) noexcept;

// Errors name the point and the reason ("proof: B (bytes 48..143): ...").
// Decompression always checks that the point is on its curve; `check`
// says whether the subgroups are checked too.
Result<Proof> decode_proof_bytes(std::span<const unsigned char, kProofBytes> bytes,
                                 PointCheck check = PointCheck::full);

}  // namespace stoker::engine::groth16

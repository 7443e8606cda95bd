// The optimal ate pairing of BLS12-381 on the CPU: e: G1 x G2 -> GT, GT the
// order-r subgroup of Fq12*, and products of pairings sharing one final
// exponentiation, which is what verifying a Groth16 proof takes:
// e(A, B) = e(alpha, beta) e(IC, gamma) e(C, delta) is checked as
// e(-A, B) e(alpha, beta) e(IC, gamma) e(C, delta) == 1.
//
// e(P, Q) = f_{z,Q}(P)^(3 (q^12 - 1) / r) for the curve's parameter
// z = -0xd201000000010000: a Miller loop over the bits of |z| (lines of
// the M-type twist, evaluated as sparse Fq12 elements, conjugated at the
// end because z < 0), then the easy part of the exponent, (q^6 - 1)(q^2 + 1),
// and the hard part 3 (q^4 - q^2 + 1) / r by the chain of Hayashida,
// Hayasaka and Teruya (five exponentiations by z). The factor 3 is what
// that chain computes, and what zcash's bls12_381, RELIC and @noble/curves
// compute too (e(G1, G2) is the value their tests hold); 3 is prime to r,
// so the map is still bilinear and non-degenerate.
//
// Inputs must be in G1 and G2 (the decoders check it); for other points the
// value means nothing. A term with the point at infinity on either side
// contributes 1. Thread safe: no state; allocation only for the loop's
// per-term points.
#pragma once

#include <span>

#include "kernels/fq12.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels {

// One factor e(p, q) of a product of pairings.
struct PairingTerm {
  G1Affine p;
  G2Affine q;
};

namespace cpu {

// The product of f_{z,q}(p) over the terms, conjugated (z < 0); one
// squaring of the accumulator per bit of |z| serves all terms.
Fq12 miller_loop(std::span<const PairingTerm> terms);
// f^(3 (q^12 - 1) / r).
Fq12 final_exponentiation(const Fq12& f);

Fq12 pairing(const G1Affine& p, const G2Affine& q);
// Whether the product of e(p_i, q_i) is 1 in GT (true for no terms).
bool pairing_product_is_one(std::span<const PairingTerm> terms);

}  // namespace cpu
}  // namespace stoker::kernels

// The JSON files of snarkjs's Groth16 (docs/GROTH16_FILES.md
// section 5): proof.json, public.json and verification_key.json for
// BLS12-381 keys.
//
// Writing gives exactly the bytes snarkjs's CLI writes (bfj with one-space
// indentation, keys in snarkjs's order, decimal strings of canonical
// values, affine points with z = "1", the point at infinity as snarkjs
// writes it, no trailing newline), so a proof stoker makes can be diffed
// against one snarkjs makes.
//
// Reading is stricter than snarkjs: every number must be a decimal string
// (no hex, no JSON numbers) below q (coordinates) or r (public values);
// z must be 0 (the point at infinity) or 1 (affine), never another
// projective z; every point must be on its curve and in its subgroup;
// verification_key.json must say protocol "groth16", curve "bls12381" and
// hold nPublic + 1 IC points. Messages name the source and the field
// ("proof.json: pi_b: not on the curve", "public.json: [3]: ... is not
// below r"). No exception escapes; thread safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proving_key.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

// proof.json: pi_a, pi_b, pi_c, protocol, curve.
std::string proof_json(const Proof& proof);
Error write_proof_json(const std::string& path, const Proof& proof);
// `source` names the text in messages (a file name). protocol and curve,
// where present, must be "groth16" and "bls12381".
Result<Proof> parse_proof_json(std::string_view text, const std::string& source);
Result<Proof> read_proof_json(const std::string& path);

// public.json: the public values, outputs then inputs (w_1 .. w_nPublic),
// Montgomery form in memory.
std::string public_json(std::span<const kernels::Fr> values);
Error write_public_json(const std::string& path, std::span<const kernels::Fr> values);
Result<std::vector<kernels::Fr>> parse_public_json(std::string_view text,
                                                   const std::string& source);
Result<std::vector<kernels::Fr>> read_public_json(const std::string& path);

// verification_key.json: protocol, curve, nPublic, vk_alpha_1, vk_beta_2,
// vk_gamma_2, vk_delta_2, vk_alphabeta_12 (e(alpha_1, beta_2), which no
// verifier reads; `include` computes it, one pairing, as snarkjs's export
// does), IC. Reading ignores vk_alphabeta_12.
enum class AlphaBeta { include, omit };
std::string verification_key_json(const VerifyingKey& vk,
                                  AlphaBeta alpha_beta = AlphaBeta::include);
Error write_verification_key_json(const std::string& path, const VerifyingKey& vk,
                                  AlphaBeta alpha_beta = AlphaBeta::include);
Result<VerifyingKey> parse_verification_key_json(std::string_view text, const std::string& source);
Result<VerifyingKey> read_verification_key_json(const std::string& path);

}  // namespace stoker::engine::groth16

// A Groth16 proof's 192-byte form; see proof.hpp.
#include "engine/groth16/proof.hpp"

#include <string>

#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine::groth16 {

using kernels::kG1CompressedBytes;
using kernels::kG2CompressedBytes;

static_assert(kProofBytes == 2 * kG1CompressedBytes + kG2CompressedBytes);

void encode_proof_bytes(const Proof& proof, std::span<unsigned char, kProofBytes> out) noexcept {
  kernels::encode_g1_compressed(proof.a, out.data());
  kernels::encode_g2_compressed(proof.b, out.data() + kG1CompressedBytes);
  kernels::encode_g1_compressed(proof.c, out.data() + kG1CompressedBytes + kG2CompressedBytes);
}

Result<Proof> decode_proof_bytes(std::span<const unsigned char, kProofBytes> bytes,
                                 PointCheck check) {
  const auto subgroup =
      check == PointCheck::full ? kernels::SubgroupCheck::yes : kernels::SubgroupCheck::skip;
  const auto fail = [](const char* what, std::error_code ec) {
    return Error{Errc::invalid_argument, std::string("proof: ") + what + ": " + ec.message()};
  };
  Proof p;
  constexpr std::size_t kB = kG1CompressedBytes, kC = kG1CompressedBytes + kG2CompressedBytes;
  if (auto ec = kernels::decode_g1_compressed(bytes.data(), p.a, subgroup))
    return fail("A (bytes 0..47)", ec);
  if (auto ec = kernels::decode_g2_compressed(bytes.data() + kB, p.b, subgroup))
    return fail("B (bytes 48..143)", ec);
  if (auto ec = kernels::decode_g1_compressed(bytes.data() + kC, p.c, subgroup))
    return fail("C (bytes 144..191)", ec);
  return p;
}

}  // namespace stoker::engine::groth16

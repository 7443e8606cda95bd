// Field elements as the decimal strings snarkjs's JSON files hold: the
// canonical integer (never Montgomery form), digits only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/field.cuh"
#include "kernels/fq.cuh"

namespace stoker::engine::groth16::detail {

// The decimal digits of a little-endian multi-limb integer ("0" for zero).
std::string to_decimal(std::span<const std::uint64_t> limbs);

enum class DecimalProblem { none, not_decimal, too_large };

// `text` into `limbs` (little-endian): only the digits 0-9, at least one
// (leading zeros are taken, as JavaScript's BigInt takes them); too_large
// when the value does not fit the limbs.
DecimalProblem parse_decimal(std::string_view text, std::span<std::uint64_t> limbs);

std::string decimal(const kernels::Fq& x);
std::string decimal(const kernels::Fr& x);

// A decimal string of a value below q (below r) to Montgomery form; the
// reason on failure, for the caller's message: "'...' is not a decimal
// number" or "'...' is not below q".
struct ParsedFq {
  kernels::Fq value;
  std::string problem;  // empty when `value` holds the number
};
ParsedFq parse_fq(std::string_view text);
struct ParsedFr {
  kernels::Fr value;
  std::string problem;
};
ParsedFr parse_fr(std::string_view text);

// A modulus a file declares (n8 little-endian bytes) for a message: its
// decimal value and, for the fields circom compiles to that stoker meets
// most, whose it is ("21888...583 (bn128's q)").
std::string describe_modulus(std::span<const unsigned char> le_bytes);

}  // namespace stoker::engine::groth16::detail

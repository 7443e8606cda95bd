// q's constants for Fq (fq.cuh) and its CPU product (fq_mul_adx.hpp).
#pragma once

#include <cstdint>

namespace stoker::kernels::fq_detail {
// q, little-endian 64-bit limbs.
inline constexpr std::uint64_t kQ0 = 0xb9feffffffffaaabull, kQ1 = 0x1eabfffeb153ffffull,
                               kQ2 = 0x6730d2a0f6b0f624ull, kQ3 = 0x64774b84f38512bfull,
                               kQ4 = 0x4b1ba7b6434bacd7ull, kQ5 = 0x1a0111ea397fe69aull;
// -q^-1 mod 2^64 and mod 2^32.
inline constexpr std::uint64_t kInv64 = 0x89f3fffcfffcfffdull;
inline constexpr std::uint32_t kInv32 = 0xfffcfffdu;
// 2^384 mod q (Montgomery one) and 2^768 mod q (to enter Montgomery form).
inline constexpr std::uint64_t kOne0 = 0x760900000002fffdull, kOne1 = 0xebf4000bc40c0002ull,
                               kOne2 = 0x5f48985753c758baull, kOne3 = 0x77ce585370525745ull,
                               kOne4 = 0x5c071a97a256ec6dull, kOne5 = 0x15f65ec3fa80e493ull;
inline constexpr std::uint64_t kR20 = 0xf4df1f341c341746ull, kR21 = 0x0a76e6a609d104f1ull,
                               kR22 = 0x8de5476c4c95b6d5ull, kR23 = 0x67eb88a9939d83c0ull,
                               kR24 = 0x9a793e85b519952dull, kR25 = 0x11988fe592cae3aaull;
}  // namespace stoker::kernels::fq_detail

// Sections of 32-byte scalars in the snarkjs container (detail/bin_file.hpp),
// as .wtns files and stoker's bellman witnesses hold them: little-endian,
// canonical (below r). Reading goes straight into the vector's memory and
// converts to Montgomery form in place on threads; a value not below r is
// named by its index and byte. The modulus as the files' headers write it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/detail/bin_file.hpp"
#include "engine/groth16/witness_values.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16::detail {

inline constexpr std::size_t kFrBytes = 32;

// r, 32 bytes little-endian.
void write_r_le(unsigned char out[kFrBytes]);

// Section `id` must hold exactly `count` values: otherwise "SIZE bytes where
// <count_words> 32 * count = ..." says what fixed the count ("nWitness = 27
// makes", "the header's counts make").
Error read_fr_section(const BinFileReader& f, std::uint32_t id, std::size_t count,
                      std::string_view count_words, WitnessValues& out,
                      unsigned threads);

// The values, canonical, into the writer's open section.
Error write_fr_values(BinFileWriter& out, std::span<const kernels::Fr> values);

}  // namespace stoker::engine::groth16::detail

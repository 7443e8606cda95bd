// The hpoly producer eight elements at a time (AVX-512 F, DQ, IFMA), behind the
// fill path FillPath::ifma (detail/hpoly_fill.hpp). x86-64 with GCC or
// Clang only (target attributes, __builtin_cpu_supports); elsewhere the
// declarations are absent and the path is never offered.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/field.cuh"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_HPOLY_IFMA 1

namespace stoker::engine::workloads::detail {

// Elements [first, first + count) of a and b (streams ka, kb) and, when c is
// not null, c = a * b, eight at a time in AVX-512 lanes; count a multiple
// of eight. Non-temporal stores where `nontemporal` and the pointers are
// 64-byte aligned. Requires fill_ifma_supported() (detail/hpoly_fill.hpp).
void fill_ifma_lanes(std::uint64_t ka, std::uint64_t kb, std::size_t first, std::size_t count,
                     kernels::Fr* a, kernels::Fr* b, kernels::Fr* c, bool nontemporal);

}  // namespace stoker::engine::workloads::detail
#endif

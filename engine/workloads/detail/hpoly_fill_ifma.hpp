// The hpoly producer's eight-at-a-time product (AVX-512 IFMA), behind the
// fill path FillPath::ifma (detail/hpoly_fill.hpp). x86-64 with GCC or
// Clang only (target attributes, __builtin_cpu_supports); elsewhere the
// declarations are absent and the path is never offered.
#pragma once

#include <cstdint>

#include "kernels/field.cuh"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_HPOLY_IFMA 1

namespace stoker::engine::workloads::detail {

// Whether this CPU has AVX-512F and IFMA.
bool fill_ifma_supported();

// c[e] = a[e] * b[e] (Fr's product) for e < 8, words as eight lanes: word k
// of element e is w[k][e]. Requires fill_ifma_supported().
void mont_mul_ifma8_lanes(const std::uint64_t (&a)[4][8], const std::uint64_t (&b)[4][8],
                          std::uint64_t (&c)[4][8]);

// The same on eight elements, for tests.
void mont_mul_ifma8(const kernels::Fr* a, const kernels::Fr* b, kernels::Fr* c);

}  // namespace stoker::engine::workloads::detail
#endif

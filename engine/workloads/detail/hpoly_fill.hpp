// The two implementations behind workloads::hpoly_fill, exposed so that tests
// can hold them against each other; callers use hpoly_fill, which picks one.
//
// portable: C++ only; a, b from the counter-based generator, c = a * b with
// Fr's own product. adx: x86-64 CPUs with BMI2 and ADX (Intel since
// Broadwell, AMD since Zen); the same generator, and the Montgomery product
// as MULX with two carry chains (ADCX/ADOX), kernels/detail/fr_mul_adx.hpp;
// optimized builds only (-O0 cannot allocate the product's registers). Both
// write the same bits: the fill is a pure function of (seed, partition, index)
// whichever path a machine takes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/field.cuh"

namespace stoker::engine::workloads::detail {

// ifma: eight elements at a time in AVX-512 lanes, draws, product and
// stores (detail/hpoly_fill_ifma.hpp): 12.6-15.0 ns per element against the
// adx path's 25 on the development host (one thread, 2^22 elements).
enum class FillPath { portable, adx, ifma };

// The generator: word j of element i of a stream with key k is wyrand's
// output function (the two halves of s (s ^ kWyMix), 128 bits, XORed) at
// s = k + (4 i + j) kWyStep.
inline constexpr std::uint64_t kWyStep = 0xa0761d6478bd642full, kWyMix = 0xe7037ed1a0b428dbull;

// Whether this build and this CPU can take the adx path.
bool fill_adx_supported();
// The same for the ifma path (AVX-512 F, DQ and IFMA; x86-64 GCC/Clang builds).
bool fill_ifma_supported();

// hpoly_fill through the given path; `adx` requires fill_adx_supported(),
// `ifma` fill_ifma_supported().
void hpoly_fill_path(FillPath path, std::uint64_t seed, std::size_t partition, std::size_t first,
                     std::size_t count, kernels::Fr* a, kernels::Fr* b, kernels::Fr* c,
                     bool nontemporal);

}  // namespace stoker::engine::workloads::detail

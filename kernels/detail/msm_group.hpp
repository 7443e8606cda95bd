// What the MSM code, CPU and GPU, needs to know about a group: its point
// types (affine inputs, XYZZ sums), the field of its coordinates, and what
// one of its additions costs. Everything else (digits, sort, bucket
// layout, parts, reduction order) is the same for G1 and G2, so the
// Pippenger code is written once over MsmGroupTraits<Affine>.
//
// The cost is in G1 mixed additions, the unit of the GPU cost model
// (msm_window.hpp). A G2 mixed addition is the same madd-2008-s formula
// over Fq2: 8 Fq2 products of 3 Fq products each (Karatsuba) and 2 Fq2
// squarings of 2 each, 28 Fq products against G1's 10. Fq2 also adds Fq
// additions: 5 per product and 3 per squaring (Karatsuba's sums), and the
// formula's own 7 come twice, 53 more than G1's 7. At about 5 % of an Fq
// product each on the GPU (a 12-limb carry chain and a conditional
// subtraction against a 12 x 12 limb product and its reduction) that is
// 30.7 against 10.35 product-equivalents: 3. XYZZ + XYZZ keeps G1's ratio
// to the mixed addition (12M + 2S: 40 Fq products against 28, as 14
// against 10). The window choice hardly depends on the figure: it scales
// the additions and the reduction alike and only shrinks the sort, which
// costs the same per entry in either group, from 1 % of an addition to a
// third of that.
//
// Registers: a G2 XYZZ sum is 96 32-bit registers and an affine point 48,
// twice G1's. The bucket loop (one sum, one point) then sits at the cap of
// 255 with a few hundred bytes spilled (G1: 168, none), so fewer threads
// are resident per SM; the kernels that hold two or three sums at once
// (the join levels, the reduction, the window combination) spill kilobytes.
// ptxas -v (the STOKER_PTXAS_VERBOSE option) gives the figures.
#pragma once

#include <cstddef>

#include "kernels/fq.cuh"
#include "kernels/fq2.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/detail/msm_window.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::detail {

template <typename Affine>
struct MsmGroupTraits;

template <>
struct MsmGroupTraits<G1Affine> {
  using Affine = G1Affine;
  using Xyzz = G1Xyzz;
  using Field = Fq;
  static constexpr MsmGroup kGroup = MsmGroup::g1;
  static constexpr double kAdditionCost = 1.0;
  static constexpr std::size_t kTreeStop = 256;  // cpu_group.hpp
};

template <>
struct MsmGroupTraits<G2Affine> {
  using Affine = G2Affine;
  using Xyzz = G2Xyzz;
  using Field = Fq2;
  static constexpr MsmGroup kGroup = MsmGroup::g2;
  static constexpr double kAdditionCost = 3.0;
  static constexpr std::size_t kTreeStop = 96;  // cpu_group.hpp
};

template <typename Affine>
using XyzzOf = typename MsmGroupTraits<Affine>::Xyzz;

// The same, for code that holds the group as a value (a plan).
constexpr bool known_group(MsmGroup g) {
  return g == MsmGroup::g1 || g == MsmGroup::g2;
}
constexpr double addition_cost(MsmGroup g) {
  return g == MsmGroup::g2 ? MsmGroupTraits<G2Affine>::kAdditionCost
                           : MsmGroupTraits<G1Affine>::kAdditionCost;
}
constexpr std::size_t affine_bytes(MsmGroup g) {
  return g == MsmGroup::g2 ? sizeof(G2Affine) : sizeof(G1Affine);
}
constexpr std::size_t xyzz_bytes(MsmGroup g) {
  return g == MsmGroup::g2 ? sizeof(G2Xyzz) : sizeof(G1Xyzz);
}

}  // namespace stoker::kernels::detail

// The GPU code lives in gpu::detail, where detail:: means that namespace.
namespace stoker::kernels::gpu::detail {
using kernels::detail::addition_cost;
using kernels::detail::affine_bytes;
using kernels::detail::known_group;
using kernels::detail::MsmGroupTraits;
using kernels::detail::xyzz_bytes;
using kernels::detail::XyzzOf;
// The group's batched affine additions in Fq products (msm_window.hpp).
constexpr const AffineStepProducts& affine_steps(MsmGroup g) {
  return g == MsmGroup::g2 ? kG2AffineSteps : kG1AffineSteps;
}
}  // namespace stoker::kernels::gpu::detail

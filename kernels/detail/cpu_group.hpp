// What the CPU point code (MSM, point sums, point checks) needs to know about
// a group beyond the operations g1.cuh and g2.cuh overload for both: its
// XYZZ type, the field of its coordinates (for batched inversions), and
// where a tree of batched affine additions stops paying.
//
// kTreeStop: one more level of the tree over m points costs an inversion
// (about 570 Fq products in either field: Fq2's is Fq's plus a few) and
// m / 2 affine additions of about 6 field products, and saves m / 2 mixed
// additions of about 10. In Fq products (an Fq2 product is 3) that pays
// from m = 2 * 570 / 4 = 285 in G1 and from m = 2 * 570 / 12 = 95 in G2.
// The figures are MsmGroupTraits' kTreeStop (msm_group.hpp), which holds
// what the GPU code needs to know of a group as well.
#pragma once

#include "kernels/detail/msm_group.hpp"

namespace stoker::kernels::detail {

template <typename Affine>
using CpuGroup = MsmGroupTraits<Affine>;

}  // namespace stoker::kernels::detail

// The CPU check's batched group test (random buckets) on its own (point_check_cpu.cpp): for
// points all on their curve, whether every one is in the group, but for a
// chance of at most 2^-64; false too when the OS gave no coins. What
// cpu::check_points does from 4096 points on, exposed so that tests can
// tell the batch's answer from that of the per-point test behind it.
#pragma once

#include <cstddef>

#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels::cpu::detail {

bool all_in_group(const G1Affine* points, std::size_t n, unsigned threads = 0);
bool all_in_group(const G2Affine* points, std::size_t n, unsigned threads = 0);

}  // namespace stoker::kernels::cpu::detail

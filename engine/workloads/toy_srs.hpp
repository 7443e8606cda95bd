// A toy SRS: the H-query points of a Groth16 setup made from a secret drawn
// from a seed, for tests and benchmarks of the ntt_msm_h workload. TESTING
// ONLY, NEVER FOR PRODUCTION: whoever knows the seed knows tau and delta and
// can forge proofs.
//
// For n = 2^log_n, point i (0 <= i < n - 1) is [tau^i Z(tau) / delta] G with
// Z(x) = x^n - 1 and G the generator of G1: the points a prover multiplies
// the coefficients of h by, so that sum_i h_i H_i = [h(tau) Z(tau) / delta] G,
// which a test checks with the secret. tau is drawn off every NTT domain
// (tau^(2^k) != 1 for k <= 32), so Z(tau) != 0 at every size.
//
// make_toy_srs computes any range of points, on a GPU or the CPU, with the
// same bits either way (kernels/fixed_base.hpp): a file can be written in
// pieces and the engine given a slice. No exception escapes; thread safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/error.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"

namespace stoker::engine::workloads {

inline constexpr unsigned kToySrsMinLogN = 1;
inline constexpr unsigned kToySrsMaxLogN = 28;

// A toy SRS's secret, drawn from the seed: testing only, never production
// (whoever knows it can forge proofs).
struct ToySrsSecret {
  kernels::Fr tau, delta;
};

// tau with tau^(2^k) != 1 for every k <= 32 (off every NTT domain) and
// tau != 0; delta != 0. A pure function of the seed.
ToySrsSecret toy_srs_secret(std::uint64_t seed);

// The H-query points of a setup for 2^log_n constraints: n - 1.
inline std::size_t toy_srs_points(unsigned log_n) {
  return (std::size_t{1} << log_n) - 1;
}

// The scalar of H-query point i: tau^i * Z(tau) / delta, Z(x) = x^(2^log_n) - 1.
kernels::Fr toy_srs_scalar(const ToySrsSecret& s, unsigned log_n, std::size_t i);

// Points [first, first + out.size()) of the toy SRS for log_n:
// [tau^i Z(tau) / delta] G, affine (Montgomery form, as the MSM takes them).
// cuda_ordinal >= 0: on that GPU, in chunks of 2^22 points (at most 512 MiB
// of device memory and 768 MiB of pinned host memory, whatever the size;
// engine/groth16/fixed_base_on_gpu.hpp), the scalars computed there too; the
// calling thread's current device is left as it was. -1: on the CPU with
// `threads` threads (0: hardware threads). Errors name the problem: log_n
// outside 1..28, a range past the last point, a GPU that does not exist, a
// CUDA failure with its message.
Error make_toy_srs(std::uint64_t seed, unsigned log_n, std::size_t first,
                   std::span<kernels::G1Affine> out, int cuda_ordinal = -1, unsigned threads = 0);

}  // namespace stoker::engine::workloads

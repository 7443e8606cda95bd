// The toy SRS; see toy_srs.hpp.
#include "engine/workloads/toy_srs.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "common/splitmix64.hpp"
#include "engine/groth16/fixed_base_on_gpu.hpp"
#include "engine/workloads/detail/toy_srs_scalars.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/fixed_base.hpp"

namespace stoker::engine::workloads {
namespace {

using kernels::Fr;
using kernels::G1Affine;

// Points per CPU chunk: the scalars of one chunk (32 MiB) at a time.
constexpr std::size_t kCpuChunk = std::size_t{1} << 20;

// Uniform over [0, r) by rejection, from a splitmix64 stream.
Fr draw(std::uint64_t key, std::uint64_t& counter) {
  for (;;) {
    std::uint64_t v[4];
    for (auto& w : v) w = common::splitmix64(key + counter++);
    v[3] &= 0x7fffffffffffffffull;  // r < 2^255: about half the draws are kept
    if (Fr::is_canonical(v)) return Fr::from_canonical(v);
  }
}

// Z(tau) / delta: every scalar is this times a power of tau.
Fr scalar_factor(const ToySrsSecret& s, unsigned log_n) {
  return (s.tau.pow(std::uint64_t{1} << log_n) - Fr::one()) * s.delta.inverse();
}

Error check_range(unsigned log_n, std::size_t first, std::size_t count) {
  if (log_n < kToySrsMinLogN || log_n > kToySrsMaxLogN)
    return Error{Errc::invalid_argument, "toy SRS: log_n " + std::to_string(log_n) +
                                             " is outside " + std::to_string(kToySrsMinLogN) +
                                             ".." + std::to_string(kToySrsMaxLogN)};
  const std::size_t total = toy_srs_points(log_n);
  if (first > total || count > total - first)
    return Error{Errc::invalid_argument, "toy SRS: points " + std::to_string(first) + ".." +
                                             std::to_string(first + count) +
                                             " asked for, but log_n " + std::to_string(log_n) +
                                             " has " + std::to_string(total)};
  return {};
}

// scalars[j] = base * tau^j, in parallel slices that each start from their
// own power.
void fill_scalars(Fr* scalars, std::size_t count, const Fr& base, const Fr& tau, unsigned threads) {
  kernels::detail::parallel_for(
      count, threads,
      [&](std::size_t b, std::size_t e) {
        Fr x = base * tau.pow(static_cast<std::uint64_t>(b));
        for (std::size_t j = b; j < e; ++j) {
          scalars[j] = x;
          x *= tau;
        }
      },
      /*grain=*/8192);
}

Error make_cpu(const ToySrsSecret& s, unsigned log_n, std::size_t first, std::span<G1Affine> out,
               unsigned threads) {
  const Fr factor = scalar_factor(s, log_n);
  std::vector<Fr> scalars;
  try {
    scalars.resize(std::min(out.size(), kCpuChunk));
  } catch (const std::bad_alloc&) {
    return Error{Errc::out_of_host_memory, "toy SRS: no host memory for the scalars"};
  }
  for (std::size_t done = 0; done < out.size(); done += kCpuChunk) {
    const std::size_t count = std::min(kCpuChunk, out.size() - done);
    const Fr base = factor * s.tau.pow(static_cast<std::uint64_t>(first + done));
    fill_scalars(scalars.data(), count, base, s.tau, threads);
    kernels::cpu::fixed_base_mul(out.data() + done, scalars.data(), count, threads);
  }
  return {};
}

// The scalars made on the GPU, chunk by chunk (detail/toy_srs_scalars.hpp).
Error make_gpu(const ToySrsSecret& s, unsigned log_n, std::size_t first, std::span<G1Affine> out,
               int ordinal) {
  const Fr factor = scalar_factor(s, log_n);
  const groth16::FixedBaseTask<G1Affine> task{
      out, {}, [&](Fr* d_out, std::size_t at, std::size_t count, cudaStream_t stream) {
        const Fr base = factor * s.tau.pow(static_cast<std::uint64_t>(first + at));
        return detail::toy_srs_scalars_gpu(d_out, base, s.tau, count, stream);
      }};
  return groth16::fixed_base_on_gpu<G1Affine>(ordinal, {&task, 1}, "toy SRS");
}

}  // namespace

ToySrsSecret toy_srs_secret(std::uint64_t seed) {
  const std::uint64_t key = common::splitmix64(seed ^ 0x5352535f746f7973ull);  // "SRS_toys"
  std::uint64_t counter = 0;
  ToySrsSecret s{Fr::zero(), Fr::zero()};
  // tau^(2^32) != 1 puts tau off every domain of size 2^k, k <= 32 (each is
  // inside the one of size 2^32); tau = 0 would zero every scalar but one.
  do s.tau = draw(key, counter);
  while (s.tau.is_zero() || s.tau.pow(std::uint64_t{1} << 32) == Fr::one());
  do s.delta = draw(key, counter);
  while (s.delta.is_zero());
  return s;
}

Fr toy_srs_scalar(const ToySrsSecret& s, unsigned log_n, std::size_t i) {
  return s.tau.pow(static_cast<std::uint64_t>(i)) * scalar_factor(s, log_n);
}

Error make_toy_srs(std::uint64_t seed, unsigned log_n, std::size_t first, std::span<G1Affine> out,
                   int cuda_ordinal, unsigned threads) {
  if (Error e = check_range(log_n, first, out.size())) return e;
  if (out.empty()) return {};
  const ToySrsSecret s = toy_srs_secret(seed);
  try {
    if (cuda_ordinal >= 0) return make_gpu(s, log_n, first, out, cuda_ordinal);
    return make_cpu(s, log_n, first, out, threads);
  } catch (const std::bad_alloc&) {
    return Error{Errc::out_of_host_memory, "toy SRS: out of host memory"};
  } catch (const std::exception& e) {
    return Error{Errc::kernel_failed, std::string("toy SRS: ") + e.what()};
  }
}

}  // namespace stoker::engine::workloads

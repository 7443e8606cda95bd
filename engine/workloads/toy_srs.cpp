// The toy SRS; see toy_srs.hpp.
#include "engine/workloads/toy_srs.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common/splitmix64.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/workloads/detail/toy_srs_scalars.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/fixed_base.hpp"

namespace stoker::engine::workloads {
namespace {

using kernels::Fr;
using kernels::G1Affine;

// Points per GPU chunk: 128 MiB of scalars and 384 MiB of points on the
// device, and two pinned bounce buffers of 384 MiB on the host.
constexpr std::size_t kGpuChunk = std::size_t{1} << 22;
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

// Chunks on one stream: scalars, fixed-base multiplication, a copy into
// pinned bounce buffer k % 2; while the GPU works on chunk k, the host
// copies chunk k - 1 out of the other buffer into `out`.
Error make_gpu(const ToySrsSecret& s, unsigned log_n, std::size_t first, std::span<G1Affine> out,
               int ordinal) {
  const std::string where = "toy SRS on GPU " + std::to_string(ordinal) + ": ";
  const auto fail = [&where](std::error_code ec, const std::string& what) {
    return Error{ec, where + what + ": " + ec.message()};
  };
  const auto wrap = [&where](Error e) { return Error{e.code, where + e.what()}; };

  devices::KeepCurrentDevice keep(true);
  devices::DiscoverOptions options;
  options.backend = devices::BackendChoice::cuda;
  options.cuda_ordinals = {ordinal};
  auto set = devices::discover(options);
  if (!set) return wrap(std::move(set).error());
  devices::Device& device = (*set)[0];
  if (auto ec = device.make_current()) return fail(ec, "making it current");

  const std::size_t chunk = std::min(out.size(), kGpuChunk);
  const std::size_t scratch_bytes = kernels::gpu::fixed_base_scratch_bytes(chunk);
  auto d_scalars = device.allocate(chunk * sizeof(Fr));
  if (!d_scalars) return wrap(std::move(d_scalars).error());
  auto d_points = device.allocate(chunk * sizeof(G1Affine));
  if (!d_points) return wrap(std::move(d_points).error());
  auto d_scratch = device.allocate(scratch_bytes);
  if (!d_scratch) return wrap(std::move(d_scratch).error());
  devices::PinnedBuffer bounce[2];
  devices::Event done_event[2];
  for (int b = 0; b < 2; ++b) {
    auto p = devices::allocate_pinned(devices::Backend::cuda, chunk * sizeof(G1Affine));
    if (!p) return wrap(std::move(p).error());
    bounce[b] = std::move(*p);
    auto e = device.create_event(devices::EventKind::blocking_sync);
    if (!e) return wrap(std::move(e).error());
    done_event[b] = std::move(*e);
  }
  auto stream = device.create_stream();
  if (!stream) return wrap(std::move(stream).error());
  const auto native = static_cast<cudaStream_t>(stream->native());
  auto* scalars = static_cast<Fr*>(d_scalars->data());
  auto* points = static_cast<G1Affine*>(d_points->data());

  const Fr factor = scalar_factor(s, log_n);
  const auto run = [&]() -> Error {
    std::size_t pending_at = 0, pending_count = 0;  // the chunk in the other buffer
    int slot = 0;
    for (std::size_t done = 0; done < out.size(); done += chunk, slot ^= 1) {
      const std::size_t count = std::min(chunk, out.size() - done);
      const Fr base = factor * s.tau.pow(static_cast<std::uint64_t>(first + done));
      if (auto ec = detail::toy_srs_scalars_gpu(scalars, base, s.tau, count, native))
        return fail(ec, "scalars of points from " + std::to_string(first + done));
      if (auto ec = kernels::gpu::fixed_base_mul(points, scalars, count, d_scratch->data(),
                                                 scratch_bytes, native))
        return fail(ec, "fixed-base multiplication of points from " + std::to_string(first + done));
      if (auto ec = stream->copy(bounce[slot].data(), points, count * sizeof(G1Affine)))
        return fail(ec, "copying points from " + std::to_string(first + done) + " to the host");
      if (auto ec = stream->record(done_event[slot])) return fail(ec, "recording an event");
      if (pending_count) {
        if (auto ec = done_event[slot ^ 1].synchronize())
          return fail(ec, "points from " + std::to_string(first + pending_at));
        std::memcpy(out.data() + pending_at, bounce[slot ^ 1].data(),
                    pending_count * sizeof(G1Affine));
      }
      pending_at = done;
      pending_count = count;
    }
    if (auto ec = done_event[slot ^ 1].synchronize())
      return fail(ec, "points from " + std::to_string(first + pending_at));
    std::memcpy(out.data() + pending_at, bounce[slot ^ 1].data(), pending_count * sizeof(G1Affine));
    return {};
  };
  Error e = run();
  // Nothing may still write into the buffers when they are freed.
  const std::error_code drained = stream->synchronize();
  if (!e && drained) e = fail(drained, "finishing");
  return e;
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

// See ntt_msm_h_bench_steps.hpp.
#include "tools/bench/ntt_msm_h_bench_steps.hpp"

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>

#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "devices/meminfo.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/field.cuh"
#include "tools/bench/bench_job.hpp"

namespace stoker::tools::ntt_msm_h_bench {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;
namespace wl = engine::workloads;

void check(std::error_code ec, const std::string& what) {
  if (ec) throw Failure{what + ": " + ec.message()};
}

bool out_of_memory(std::error_code ec) {
  return ec == Errc::out_of_device_memory || ec == Errc::out_of_host_memory;
}

std::string gib(std::size_t bytes) {
  char buf[32];
  if (bytes < (std::size_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / double(1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / double(1ull << 30));
  return buf;
}

std::string size_name(unsigned log_n) {
  return "2^" + std::to_string(log_n);
}

// The smallest device budget of `e`: what an ntt_msm_h partition's MSM is
// planned for.
std::size_t min_device_budget(engine::Engine& e) {
  const auto limits = e.stats().device_budget_limit;
  return limits.empty() ? 0 : *std::min_element(limits.begin(), limits.end());
}

// Why the toy SRS of 2^log_n and one partition beside it cannot run on `e`,
// or "" when they can: on every device the points, a, b, c, the point and
// the MSM's scratch within what its budget leaves (the engine's rule: 85 %
// of the device unless --device-budget-mib says otherwise) and within its
// free memory with `extra_device` more; one partition's pinned blocks
// within the host budget; the points' host copy within available memory.
std::string why_it_does_not_fit(engine::Engine& e, unsigned log_n, std::size_t extra_device) {
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  const std::size_t srs = wl::toy_srs_points(log_n) * sizeof(G1Affine);
  const std::size_t partition =
      3 * bytes + sizeof(G1Xyzz) +
      wl::ntt_msm_h_scratch_bytes(e.devices(), log_n, srs, min_device_budget(e));
  const engine::EngineStats stats = e.stats();
  for (std::size_t d = 0; d < e.devices().size(); ++d) {
    devices::Device& dev = e.devices()[d];
    const auto mem = dev.memory_info();
    const std::size_t budget =
        d < stats.device_budget_limit.size() ? stats.device_budget_limit[d] : 0;
    std::size_t held = 0;
    if (d < stats.device_resident_bytes.size()) held += stats.device_resident_bytes[d];
    if (d < stats.device_budget_in_use.size()) held += stats.device_budget_in_use[d];
    const std::size_t left = budget > held ? budget - held : 0;
    const std::string device = "device " + std::to_string(d);
    if (srs + partition > left)
      return "the SRS and one partition need " + gib(srs + partition) + " of " + device +
             "'s budget, which has " + gib(left) + " left";
    // The engine's memory pool keeps what earlier sizes used, free for its
    // partitions: count it as free.
    const auto pooled = dev.pool_reserved_bytes();
    const std::size_t free = mem ? mem->free + (pooled ? *pooled : 0) : 0;
    if (mem && srs + partition + extra_device > free)
      return "needs " + gib(srs + partition + extra_device) + " of " + device + "'s memory, " +
             gib(free) + " free or in the engine's pool";
  }
  engine::Partition shape;
  for (int k = 0; k < 3; ++k) shape.inputs.push_back(engine::Input::produced(bytes));
  shape.outputs.push_back(engine::Output{nullptr, sizeof(G1Xyzz), false});
  const std::size_t pinned = engine::Engine::pinned_bytes(shape);
  if (pinned > stats.host_budget_limit)
    return "a partition's pinned inputs take " + gib(pinned) + ", more than the host budget of " +
           gib(stats.host_budget_limit);
  const auto host = devices::read_meminfo();
  if (host.available_bytes && srs > *host.available_bytes)
    return "the SRS's host copy takes " + gib(srs) + ", " + gib(*host.available_bytes) +
           " of host memory available";
  // All of it in the process's memory under an address-space or data
  // limit, and on the host backend each device's points and partition too.
  const bool host_backend = e.devices().backend() == devices::Backend::host;
  const std::size_t on_host =
      srs + pinned + (host_backend ? e.devices().size() * (srs + partition) : 0);
  if (Error err = common::check_host_memory(
          host_backend ? "the SRS with a partition's pinned inputs and each host device's copies"
                       : "the SRS's host copy with a partition's pinned inputs",
          on_host))
    return err.what();
  return {};
}

// The toy SRS of 2^log_n made into `points` (on the engine's first GPU where
// it has one, else on the CPU) and loaded onto every engine device. An
// error is the load's: out_of_*_memory when the points do not fit.
Result<engine::Srs> load_toy_srs(engine::Engine& e, std::uint64_t seed, unsigned log_n,
                                 std::span<G1Affine> points, double& generate_s) {
  const bool gpu = e.devices().backend() == devices::Backend::cuda;
  const auto t0 = Clock::now();
  if (auto err = wl::make_toy_srs(seed, log_n, 0, points, gpu ? e.devices()[0].info().ordinal : -1))
    throw Failure{size_name(log_n) + ": making the toy SRS: " + err.what()};
  generate_s = seconds_since(t0);
  engine::SrsLoadOptions lo;
  lo.label = "toy SRS " + size_name(log_n);
  return e.load_srs(std::span<const G1Affine>(points), lo);
}

void evict(engine::Engine& e, engine::Srs srs) {
  boost::asio::io_context io;
  std::error_code ec;
  e.async_evict_srs(std::move(srs),
                    boost::asio::bind_executor(io, [&](std::error_code c) { ec = c; }));
  io.run();
  check(ec, "evicting the SRS");
}

// Pins the host blocks and maps the device pools of a full lookahead of
// partitions like the job's before anything is timed, as a prover does at
// start-up (bench pipeline says why a warm-up alone is not enough).
void reserve(engine::Engine& e, const engine::Job& job, bool json) {
  const engine::Partition& like = job.partitions[0];
  if (auto ec = e.reserve_pinned(like, std::min(job.partitions.size(), e.lookahead())))
    if (!json)
      std::printf("  note: could not pin the pool ahead (%s); it grows in the first runs\n",
                  ec.message().c_str());
  e.reserve_device(like);
}

// Runs a copy of `job` with its points poisoned first and checked written
// after.
Result<engine::JobReport> run_job(engine::Engine& e, const engine::Job& job, wl::NttMsmHRun& run) {
  auto report = run_prepared(
      e, job, [&run] { std::fill(run.sums.begin(), run.sums.end(), G1Xyzz::infinity()); });
  if (!report) return report;
  for (std::size_t p = 0; p < run.sums.size(); ++p)
    if (run.sums[p].is_infinity())
      return Error{Errc::verification_failed,
                   job.name + ": partition " + std::to_string(p) + "'s point was not written"};
  return report;
}

std::string cell(double v, const char* format) {
  if (!(v > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace stoker::tools::ntt_msm_h_bench

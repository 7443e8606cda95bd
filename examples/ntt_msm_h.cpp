// The prover's GPU phase: an SRS loaded once and kept on every device, then
// jobs whose partitions compute h and its MSM over those points, in a
// coroutine. The toy SRS's secret derives from its seed, so each point can
// be checked on the CPU; a real prover loads its circuit's H-query points
// with engine.load_srs("params.g1") and skips the check. The SRS is evicted
// at the end: jobs still using it finish first.
#include "engine/workloads/ntt_msm_h_workload.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/toy_srs.hpp"

namespace asio = boost::asio;
namespace wl = stoker::engine::workloads;

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_ntt_msm_h: %s\n", config.error().what().c_str());
    return 2;
  }
  asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());
  const bool gpu = engine.devices().backend() == stoker::devices::Backend::cuda;
  const unsigned log_n = gpu ? 16 : 8;
  const std::uint64_t srs_seed = 42;

  std::vector<stoker::kernels::G1Affine> points(wl::toy_srs_points(log_n));
  if (auto e = wl::make_toy_srs(srs_seed, log_n, 0, points,
                                gpu ? engine.devices()[0].info().ordinal : -1)) {
    std::fprintf(stderr, "example_ntt_msm_h: %s\n", e.what().c_str());
    return 1;
  }
  auto srs = engine.load_srs(points);
  if (!srs) {
    std::fprintf(stderr, "example_ntt_msm_h: %s\n", srs.error().what().c_str());
    return 1;
  }

  int status = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int proof = 0; proof < 2; ++proof) {
          wl::NttMsmHOptions o;
          o.partitions = 3;
          o.log_n = log_n;
          o.seed = 100 + proof;
          o.srs = *srs;  // the same resident points for every job
          o.devices = &engine.devices();
          o.verify = true;
          o.secret = wl::toy_srs_secret(srs_seed);
          std::shared_ptr<wl::NttMsmHRun> run;
          auto job = wl::make_ntt_msm_h_job(o, run);
          if (!job) {
            std::fprintf(stderr, "example_ntt_msm_h: %s\n", job.error().what().c_str());
            status = 1;
            co_return;
          }
          try {
            const auto report = co_await engine.async_submit(std::move(*job), asio::use_awaitable);
            std::printf("%s", stoker::engine::summarize(report).c_str());
            if (!run->all_verified()) status = 1;
          } catch (const stoker::JobError& e) {
            std::fprintf(stderr, "example_ntt_msm_h: %s\n", e.what());
            status = 1;
          }
        }
        co_await engine.async_evict_srs(*srs, asio::use_awaitable);
        std::printf("SRS evicted: %zu bytes on each device given back\n", srs->bytes());
      },
      asio::detached);
  io.run();
  return status;
}

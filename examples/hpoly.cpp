// The built-in H polynomial workload: producers write witness-like a, b, c
// into pinned memory, the device computes h = (AB - C) / (x^n - 1) with
// NTTs over the BLS12-381 scalar field, and each partition's h is verified
// on the CPU at a random point. Handlers can also be futures.
#include "engine/workloads/hpoly_workload.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <thread>

#include "engine/engine.hpp"

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_hpoly: %s\n", config.error().what().c_str());
    return 2;
  }
  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());

  namespace wl = stoker::engine::workloads;
  std::shared_ptr<wl::HpolyRun> run;
  wl::HpolyOptions options;
  options.partitions = 4;
  options.log_n = 14;
  options.verify = true;
  auto job = wl::make_hpoly_job(options, run);
  if (!job) {
    std::fprintf(stderr, "example_hpoly: %s\n", job.error().what().c_str());
    return 2;
  }
  std::future<stoker::JobReport> done =
      engine.async_submit(std::move(job.value()), boost::asio::use_future);
  std::thread loop([&] { io.run(); });
  int status = 0;
  try {
    const stoker::JobReport report = done.get();  // a failure throws stoker::JobError
    std::printf("%s\n", stoker::engine::summarize(report).c_str());
    for (std::size_t p = 0; p < run->checks.size(); ++p)
      if (!run->checks[p].checked || !run->checks[p].ok) {
        std::fprintf(stderr, "example_hpoly: partition %zu's h failed its check\n", p);
        status = 1;
      }
  } catch (const stoker::JobError& e) {
    // what() is the report's message, naming the partition and what it needed.
    std::fprintf(stderr, "example_hpoly: job failed after %zu of %zu partitions: %s\n",
                 e.report().partitions_done, e.report().partitions, e.what());
    status = 1;
  }
  loop.join();
  return status;
}

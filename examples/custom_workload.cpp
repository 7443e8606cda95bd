// Registers a workload of one's own beside the built-in ones (ntt_msm_h,
// hpoly, synthetic) and runs it by name through the registry, as `stoker
// run --workload NAME` runs those: "scale" multiplies each partition's
// floats by a factor it takes as an option, on the GPU or, on the host
// backend, the CPU, and its verify checks every float.
//
//   build/examples/example_custom_workload     (STOKER_BACKEND=host to run without a GPU)
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/workload_registry.hpp"
#include "examples/scale_floats.hpp"

namespace workloads = stoker::engine::workloads;

namespace {

// The job's buffers: ours, alive until the handler ran (the job's verify
// holds them too).
struct ScaleRun {
  std::vector<std::vector<float>> in, out;
};

workloads::Workload::Description scale_description() {
  workloads::Workload::Description d;
  d.name = "scale";
  d.summary = "each partition's floats times a factor";
  d.partitions_default = "4";
  d.verification = "every float equals its input times the factor";
  d.options = {
      workloads::WorkloadOption::integer("factor", "F", 1, 1000, "3", "what to multiply by"),
      workloads::WorkloadOption::integer("floats", "N", 1, std::size_t{1} << 28, "262144",
                                         "floats per partition"),
  };
  return d;
}

// Called by Workload::build with values it has checked against the
// description, defaults filled in.
stoker::Result<workloads::WorkloadJob> make_scale_job(stoker::Engine& engine,
                                                      const workloads::WorkloadRequest& request,
                                                      const workloads::WorkloadValues& values) {
  const auto factor = static_cast<float>(*values.number<unsigned>("factor"));
  const auto floats = *values.number<std::size_t>("floats");
  const std::size_t partitions = request.partitions.value_or(4);
  auto run = std::make_shared<ScaleRun>();
  workloads::WorkloadJob built;
  built.job.name = "scale";
  for (std::size_t p = 0; p < partitions; ++p) {
    auto& in = run->in.emplace_back(floats);
    for (std::size_t i = 0; i < floats; ++i)
      in[i] = static_cast<float>((i * 7 + p + request.seed) % 1024) * 0.5f;
    auto& out = run->out.emplace_back(floats);
    stoker::Partition part;
    part.inputs.push_back(stoker::Input::pageable(std::as_bytes(std::span(in))));
    part.work = stoker::examples::scale_floats(factor);
    part.outputs.push_back(stoker::Output::to(std::as_writable_bytes(std::span(out))));
    built.job.partitions.push_back(std::move(part));
  }
  if (request.verify)
    built.job.verify = [run, factor](const stoker::Partition&, std::size_t p) {
      for (std::size_t i = 0; i < run->in[p].size(); ++i)
        if (run->out[p][i] != run->in[p][i] * factor)  // exact: small halves times an integer
          return make_error_code(stoker::Errc::verification_failed);
      return std::error_code{};
    };
  built.run = run;
  built.verifies = request.verify;
  built.verification = "every float equals its input times " + *values.text("factor");
  built.banner = "scale, " + std::to_string(partitions) + " partitions of " +
                 std::to_string(floats) + " floats times " + *values.text("factor") + " on " +
                 std::to_string(engine.devices().size()) + " device(s)\n";
  return built;
}

}  // namespace

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_custom_workload: %s\n", config.error().what().c_str());
    return 2;
  }
  // Registered once, before anything looks workloads up.
  auto& registry = workloads::workload_registry();
  if (auto e = registry.add(workloads::make_workload(scale_description(), make_scale_job))) {
    std::fprintf(stderr, "example_custom_workload: %s\n", e.what().c_str());
    return 1;
  }
  std::printf("workloads:");
  for (const auto* w : registry.list()) std::printf(" %s", w->name().c_str());
  std::printf("\n");

  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());
  // By name and with options as text, as a command line has them.
  const workloads::Workload* scale = registry.find("scale");
  workloads::WorkloadRequest request;
  request.values.set("factor", "5");
  request.partitions = 6;
  auto built = scale->build(engine, request);
  if (!built) {
    std::fprintf(stderr, "example_custom_workload: %s\n", built.error().what().c_str());
    return 1;
  }
  std::printf("%s", built->banner.c_str());

  int status = 1;
  engine.async_submit(std::move(built->job), [&](std::error_code ec, stoker::JobReport report) {
    if (ec) {
      std::fprintf(stderr, "example_custom_workload: job failed: %s\n", report.error.c_str());
      return;
    }
    std::printf("%s  verified: %s\n", stoker::engine::summarize(report).c_str(),
                built->verification.c_str());
    status = 0;
  });
  io.run();
  return status;
}

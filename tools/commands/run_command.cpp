// stoker run: the engine's main job, of any registered workload
// (engine/workloads/workload_registry.hpp): ntt_msm_h by default, hpoly,
// synthetic, or one a program added. The workload builds the job from its
// options and says what its summary shows; this command sets the engine up,
// warms it, runs the job and reports it.
#include "tools/commands/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "common/elapsed.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/workload_registry.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/progress_bar.hpp"
#include "tools/commands/run_report.hpp"
#include "tools/commands/run_srs.hpp"
#include "tools/commands/run_workload_options.hpp"

namespace stoker::tools {
namespace {

std::string run_help(const RunWorkloadOptions& w) {
  return "usage: stoker run [options]\n" + w.workload_help() + w.partitions_help() +
         help_entry("  --seed S", "data seed (default 1)") + w.verify_help() +
         help_entry("  --no-verify", "do not check") +
         help_entry("  --trace FILE",
                    "write the timeline as Chrome trace JSON (Perfetto, chrome://tracing)") +
         help_entry("  --json", "machine-readable summary") +
         help_entry("  --no-progress", "no progress bar") +
         help_entry("  --cold",
                    "skip pinning the host pool and growing the device pools ahead of the job, "
                    "so the job pays for them (the NTT tables and the engine's staging buffers "
                    "are still made before it)") +
         w.sections_help() + kEngineOptionsHelp;
}

// The workload's set-up on every GPU (NTT tables, kernels) before timing:
// otherwise each GPU's first partition does it inside its launch. Seconds
// it took, or nullopt after printing why it failed.
std::optional<double> prepare_gpus(const engine::Engine& e,
                                   const engine::workloads::WorkloadJob& built, bool json) {
  if (!built.prepare || e.devices().backend() != devices::Backend::cuda) return 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  if (const auto ec = built.prepare()) {
    std::fprintf(stderr, "stoker run: building the %s: %s\n", built.prepare_what.c_str(),
                 ec.message().c_str());
    return std::nullopt;
  }
  const double s = common::seconds_since(t0);
  if (!json) std::printf("  %s built on every GPU in %.2f s\n", built.prepare_what.c_str(), s);
  return s;
}

// The pinned pool and the devices' memory pools grown ahead, so that the
// timed job measures the steady state, not cudaHostAlloc (which also
// blocks the process's other CUDA calls) and mapping device memory (which
// the job's first copy would wait for).
void reserve_pools(engine::Engine& e, const engine::Job& job, bool cold, bool json) {
  if (cold) {
    if (!json) std::printf("  cold: no pinned pool or device pool reserved ahead\n");
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  const auto count = std::min(job.partitions.size(), e.lookahead());
  if (auto ec = e.reserve_pinned(job.partitions[0], count))
    std::fprintf(stderr,
                 "stoker run: could not pin the pool ahead (%s); it will grow during the job\n",
                 ec.message().c_str());
  else if (!json)
    std::printf("  pinned pool: %.0f MiB reserved for %zu partitions in flight in %.2f s\n",
                static_cast<double>(e.stats().pinned_bytes_pooled) / (1u << 20), count,
                common::seconds_since(t0));
  t0 = std::chrono::steady_clock::now();
  e.reserve_device(job.partitions[0]);
  if (!json && e.devices().backend() == devices::Backend::cuda)
    std::printf("  device memory pools grown for %d partitions in flight in %.3f s\n",
                e.config().pipeline_depth, common::seconds_since(t0));
}

// The likely cause of a failed verification where the user chose the SRS:
// the check draws the SRS's secret from --srs-seed, which must be the seed
// the file was made with.
std::string verification_hint(std::error_code result,
                              const engine::workloads::WorkloadRequest& request) {
  if (result != make_error_code(Errc::verification_failed) || !request.values.given("srs"))
    return {};
  const std::string seed = request.values.text("srs-seed").value_or("1 (the default)");
  return " (the check takes the SRS's secret from --srs-seed, here " + seed + ": was " +
         request.values.text("srs").value_or("") +
         " made by `stoker srs generate` with that seed?)";
}

int run(int argc, char** argv) {
  RunWorkloadOptions workloads(engine::workloads::workload_registry().list());
  CommandLine cl("run", run_help(workloads));
  engine::Config config;
  engine::workloads::WorkloadRequest request;
  std::string workload, trace;
  bool json = false, no_progress = false, cold = false, verify_on = false, verify_off = false;
  workloads.declare(cl, workload);
  cl.number("--partitions", request.partitions, std::size_t{1},
            std::numeric_limits<std::size_t>::max());
  cl.number("--seed", request.seed);
  cl.flag("--verify", verify_on);
  cl.flag("--no-verify", verify_off);
  cl.exclusive({"--verify", "--no-verify"});
  cl.value("--trace", trace);
  cl.flag("--json", json);
  cl.flag("--no-progress", no_progress);
  cl.flag("--cold", cold);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  auto chosen = workloads.choose(cl, workload);
  if (!chosen) return cl.usage_error(chosen.error().what());
  std::optional<OutputFile> trace_file;  // checked now: a bad path fails before the job
  if (!trace.empty()) {
    auto f = OutputFile::check(trace);
    if (!f) return cl.usage_error("--trace: " + f.error().what());
    trace_file.emplace(std::move(*f));
  }

  boost::asio::io_context io;
  auto engine = engine::Engine::create(io.get_executor(), config);
  if (!engine) return cl.failure(engine.error().what());
  auto& e = **engine;
  request.values = chosen->values;
  request.verify = verify_on || (!verify_off && e.devices().backend() != devices::Backend::cuda);
  request.srs = load_run_srs;
  auto built = chosen->workload->build(e, request);
  if (!built) return cl.failure(built.error().what());
  auto& job = built->job;
  if (!json) std::printf("stoker run: %s", built->banner.c_str());
  if (!json) print_engine_lines(e, job.partitions[0]);
  const auto prepare_s = prepare_gpus(e, *built, json);
  if (!prepare_s) return 1;
  reserve_pools(e, job, cold, json);
  if (!no_progress && !json && isatty(STDOUT_FILENO))
    job.progress = [columns = terminal_columns(STDOUT_FILENO)](std::size_t done,
                                                               std::size_t total) {
      std::printf("\r%s", progress_line(done, total, columns).c_str());
      if (done == total) std::printf("\n");
      std::fflush(stdout);
    };
  const auto warm = e.stats();
  std::error_code result;
  engine::JobReport report;
  e.async_submit(std::move(job), [&](std::error_code ec, engine::JobReport r) {
    result = ec;
    report = std::move(r);
  });
  io.run();

  // Pool growth during the job costs 0.05-0.5 s/GiB on CUDA: say so when it happened.
  if (const auto after = e.stats();
      !json && after.pinned_slab_allocations != warm.pinned_slab_allocations)
    std::printf("  pinned pool grew during the job: %zu slabs pinned, %zu given back\n",
                after.pinned_slab_allocations - warm.pinned_slab_allocations,
                after.pinned_slabs_trimmed - warm.pinned_slabs_trimmed);
  bool trace_written = true;
  if (trace_file)
    if (auto err = trace_file->write(
            [&](std::ostream& out) { engine::write_chrome_trace(out, {report}); })) {
      std::fprintf(stderr, "stoker run: the trace: %s\n", err.what().c_str());
      trace_written = false;
    }
  if (json) {
    Json extra;
    extra["ok"] = !result && trace_written;
    extra["workload"] = chosen->workload->name();
    const Json fields = built->fields ? json_fields(built->fields(!result)) : Json::object();
    for (const auto& [key, value] : fields.items()) extra[key] = value;
    extra["verified"] =
        built->verifies && !result && (!built->all_verified || built->all_verified());
    extra["prepare_ms"] = *prepare_s * 1e3;
    extra["cold"] = cold;
    std::printf("%s\n", json_text(json_report(report, e, extra)).c_str());
  } else {
    print_summary(report, !result, *built);
  }
  if (result) return cl.failure("job failed: " + report.error + verification_hint(result, request));
  return trace_written ? 0 : 1;
}

}  // namespace

int run_command(int argc, char** argv) {
  return with_memory_guard("run", [&] { return run(argc, argv); });
}

}  // namespace stoker::tools

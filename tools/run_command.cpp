// stoker run: the engine's main job. Until the hpoly workload is wired in,
// the synthetic workload: producers write pseudo-random data straight into
// pinned memory, kernels do integer work per byte, outputs are verified.
#include "tools/run_command.hpp"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"

namespace stoker::tools {
namespace {

const char* kHelp = R"(usage: stoker run [options]
  --partitions N      partitions in the job (default: 16 per GPU; 8 on the host backend)
  --size-mib M        input MiB per partition (default: 256 on GPUs, 4 on the host backend)
  --rounds R          integer mixing rounds per output word: 0 copy-bound .. 1000 compute-bound (default 16)
  --pageable          inputs from caller-owned std::vector through pinned staging (default: pinned producers)
  --seed S            data seed (default 1)
  --trace FILE        write the timeline as Chrome trace JSON (Perfetto, chrome://tracing)
  --json              machine-readable summary
  --no-progress       no progress bar
engine options: --backend auto|cuda|host --devices 0,1 --host-devices N --slowdown 1,2
  --depth N --host-budget-mib M --device-budget-mib M --chunk-mib M --workers N
)";

std::string json_report(const engine::JobReport& r, const engine::Engine& e) {
  char buf[256];
  std::string s = "{";
  std::snprintf(buf, sizeof buf,
                "\"job\":\"%s\",\"backend\":\"%s\",\"devices\":%zu,\"partitions\":%zu,\"partitions_"
                "done\":%zu,"
                "\"wall_ms\":%.3f,\"partitions_per_s\":%.3f,",
                r.name.c_str(), devices::to_string(e.devices().backend()), e.devices().size(),
                r.partitions, r.partitions_done, r.wall_ms, r.partitions_per_s());
  s += buf;
  std::snprintf(
      buf, sizeof buf,
      "\"bytes_in\":%zu,\"bytes_out\":%zu,\"h2d_gbps\":%.3f,\"d2h_gbps\":%.3f,\"bound_ms\":%.3f,",
      r.bytes_in(), r.bytes_out(), r.wall_ms > 0 ? r.bytes_in() / r.wall_ms / 1e6 : 0.0,
      r.wall_ms > 0 ? r.bytes_out() / r.wall_ms / 1e6 : 0.0, r.bound_ms);
  s += buf;
  s += "\"device_busy\":[";
  for (std::size_t d = 0; d < r.device_busy.size(); ++d) {
    std::snprintf(buf, sizeof buf, "%s%.4f", d ? "," : "", r.device_busy[d]);
    s += buf;
  }
  s += "],\"error\":\"";
  for (char c : r.error) s += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  s += "\"}";
  return s;
}

}  // namespace

int run_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
  auto base = engine::Config::from_env();
  if (!base) {
    std::fprintf(stderr, "stoker run: %s\n", base.error().what().c_str());
    return 2;
  }
  auto config = base->apply_args(args);
  if (!config) {
    std::fprintf(stderr, "stoker run: %s\n", config.error().what().c_str());
    return 2;
  }
  engine::workloads::SyntheticOptions o;
  long partitions = -1, size_mib = -1;
  bool json = false, progress = isatty(STDOUT_FILENO);
  std::string trace;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "stoker run: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return args[++i].c_str();
    };
    auto number = [&](const char* v) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < 0) {
        std::fprintf(stderr, "stoker run: %s: '%s' is not a non-negative integer\n", a.c_str(), v);
        std::exit(2);
      }
      return n;
    };
    if (a == "--partitions")
      partitions = number(value());
    else if (a == "--size-mib")
      size_mib = number(value());
    else if (a == "--rounds")
      o.rounds = static_cast<int>(number(value()));
    else if (a == "--seed")
      o.seed = static_cast<std::uint64_t>(number(value()));
    else if (a == "--pageable")
      o.pageable = true;
    else if (a == "--trace")
      trace = value();
    else if (a == "--json")
      json = true;
    else if (a == "--no-progress")
      progress = false;
    else {
      std::fprintf(stderr, "stoker run: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }

  boost::asio::io_context io;
  auto engine = engine::Engine::create(io.get_executor(), *config);
  if (!engine) {
    std::fprintf(stderr, "stoker run: %s\n", engine.error().what().c_str());
    return 1;
  }
  auto& e = **engine;
  const bool gpu = e.devices().backend() == devices::Backend::cuda;
  o.partitions =
      partitions >= 0 ? static_cast<std::size_t>(partitions) : (gpu ? 16 * e.devices().size() : 8);
  o.input_bytes = static_cast<std::size_t>(size_mib >= 0 ? size_mib : (gpu ? 256 : 4)) << 20;
  o.name = o.pageable ? "synthetic-pageable" : "synthetic-pinned";

  std::shared_ptr<engine::workloads::SyntheticRun> run;
  auto job = engine::workloads::make_synthetic_job(o, run);
  if (!job) {
    std::fprintf(stderr, "stoker run: %s\n", job.error().what().c_str());
    return 2;
  }
  if (!json) {
    std::printf(
        "stoker run: %zu partitions x %zu MiB (%s inputs, %d rounds) on %zu %s device(s), depth "
        "%d\n",
        o.partitions, o.input_bytes >> 20, o.pageable ? "pageable" : "pinned-producer", o.rounds,
        e.devices().size(), devices::to_string(e.devices().backend()), e.config().pipeline_depth);
    for (std::size_t d = 0; d < e.devices().size(); ++d)
      std::printf("  device %zu: %s\n", d, e.devices()[d].info().name.c_str());
  }
  // Warm the pinned pool first so the timed job measures the steady state,
  // not cudaHostAlloc (which also blocks the process's other CUDA calls).
  {
    const auto t0 = std::chrono::steady_clock::now();
    const auto count = std::min(o.partitions, e.lookahead());
    if (auto ec = e.reserve_pinned(engine::Engine::pinned_bytes(job->partitions[0]), count))
      std::fprintf(stderr,
                   "stoker run: could not pin the pool ahead (%s); it will grow during the job\n",
                   ec.message().c_str());
    else if (!json)
      std::printf("  pinned pool: %zu blocks reserved in %.2f s\n", count,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (progress && !json)
    job->progress = [](std::size_t done, std::size_t total) {
      const int width = 40;
      const int filled = static_cast<int>(width * done / total);
      std::printf("\r  [%.*s%*s] %zu/%zu", filled, "########################################",
                  width - filled, "", done, total);
      if (done == total) std::printf("\n");
      std::fflush(stdout);
    };
  std::error_code result;
  engine::JobReport report;
  e.async_submit(std::move(*job), [&](std::error_code ec, engine::JobReport r) {
    result = ec;
    report = std::move(r);
  });
  io.run();

  if (!trace.empty()) {
    std::ofstream f(trace);
    engine::write_chrome_trace(f, {report});
    if (!f) std::fprintf(stderr, "stoker run: could not write trace to %s\n", trace.c_str());
  }
  if (json) {
    std::printf("%s\n", json_report(report, e).c_str());
  } else {
    std::printf("%s", engine::summarize(report).c_str());
    if (!result) std::printf("  verified: every partition matches the CPU version\n");
  }
  if (result) {
    std::fprintf(stderr, "stoker run: job failed: %s\n", report.error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace stoker::tools

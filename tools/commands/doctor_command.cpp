#include "tools/commands/doctor_command.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/counted.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/commands/doctor_copies.hpp"
#include "tools/commands/doctor_host_memory.hpp"
#include "tools/commands/doctor_plan.hpp"
#include "tools/commands/doctor_report.hpp"
#include "tools/commands/doctor_verdict.hpp"
#include "tools/commands/info_command.hpp"

namespace stoker::tools {
namespace doctor {
namespace {

// Fast paths move at least this much between two events, so launch latency
// and event resolution stay far below a per cent even with --quick sizes.
constexpr std::size_t kMinTimedBytes = 256 * kMiB;

constexpr const char* kUsage =
    "usage: stoker doctor [--quick] [--json] [--size-mib N] [--reps N] [--writers N]\n"
    "Measures how this machine can feed its GPUs (pinned, pageable and registered\n"
    "transfers, under host memory load, all GPUs at once, peer copies, the cost of\n"
    "pinning) and prints a verdict.\n"
    "  --quick        fewer repetitions and smaller sizes: the whole run takes seconds\n"
    "  --json         one JSON object instead of text\n"
    "  --size-mib N   bytes per copy in MiB (default 256, 64 with --quick)\n"
    "  --reps N       timed repetitions per figure, after one warm-up (default 7, 3 with --quick)\n"
    "  --writers N    host threads writing memory during the loaded measurements\n"
    "                 (default: hardware threads - 2, at least 1; 0 skips them)\n";

struct Options {
  bool json = false;
  bool quick = false;
  std::optional<std::size_t> size_mib;
  std::optional<int> reps;
  std::optional<int> writers;
};

// Returns the options, or sets `status` (0 after --help, 2 after a usage
// error, printed).
std::optional<Options> parse_options(int argc, char** argv, int& status) {
  Options o;
  CommandLine cl("doctor", kUsage);
  cl.flag("--json", o.json);
  cl.flag("--quick", o.quick);
  cl.number("--size-mib", o.size_mib, std::size_t{1}, std::size_t{65536});
  cl.number("--reps", o.reps, 1, 1000);
  cl.number("--writers", o.writers, 0, 4096);
  if (auto rc = cl.parse(argc, argv)) {
    status = *rc;
    return std::nullopt;
  }
  return o;
}

Plan make_plan(const Options& o) {
  Plan p;
  p.copy_bytes = o.size_mib.value_or(o.quick ? 64 : 256) * kMiB;
  p.reps = o.reps.value_or(o.quick ? 3 : 7);
  p.fast_copies = static_cast<int>(std::max<std::size_t>(1, kMinTimedBytes / p.copy_bytes));
  p.cost_bytes = o.quick ? 256 * kMiB : kGiB;
  p.cost_reps = o.quick ? 1 : 3;
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  p.writers = o.writers.value_or(std::max(1, hw - 2));
  // Each writer's buffer dwarfs any last-level cache, so the writes reach DRAM.
  p.writer_bytes = o.quick ? 64 * kMiB : 256 * kMiB;
  return p;
}

int run_doctor(const Options& opt) {
  Report rep;
  rep.plan = make_plan(opt);
  const Plan& plan = rep.plan;
  rep.host = read_host_facts();
  rep.figures.writer_threads = plan.writers;

  devices::DiscoverOptions dopt;
  dopt.backend = devices::BackendChoice::cuda;
  auto set = devices::discover(dopt);
  if (!set) {
    std::fprintf(stderr, "stoker doctor: %s\n", set.error().what().c_str());
    return 1;
  }
  const std::size_t n = set->size();

  for (std::size_t i = 0; i < n; ++i) rep.infos.push_back(&(*set)[i].info());
  rep.context_s = start_contexts(*set, rep.errors);

  rep.alloc = measure_host_alloc(plan, rep.errors);

  // The registered buffer serves both the cost figure and the copies.
  const std::size_t reg_bytes = std::max(plan.cost_bytes, plan.copy_bytes);
  HostMemory reg_buf;
  devices::HostRegistration registration;
  rep.reg = measure_host_register(plan, reg_bytes, registration, reg_buf, rep.errors);

  std::vector<Rig> rigs(n);
  for (std::size_t i = 0; i < n; ++i) {
    rigs[i].dev = &(*set)[i];
    rigs[i].ordinal = (*set)[i].info().ordinal;
    prepare(rigs[i], plan, rep.errors);
  }
  rep.figures.gpus.resize(n);

  for (std::size_t i = 0; i < n; ++i)
    if (rigs[i].ready)
      measure_transfers(rigs[i], plan, registration, rep.figures.gpus[i], rep.errors);

  auto concurrent = measure_concurrent(rigs, plan, rep.errors);
  rep.figures.all_gpus_h2d = concurrent.aggregate_gbps;
  rep.concurrent_per_gpu = std::move(concurrent.per_gpu_gbps);
  rep.figures.peers = measure_peers(rigs, plan, rep.errors);

  if (plan.writers > 0) {
    MemoryLoad load(plan.writers, plan.writer_bytes);
    if (load.failed())
      rep.errors.add(std::to_string(load.failed()) + " of " + std::to_string(plan.writers) +
                     " writer threads could not allocate " + format_bytes(plan.writer_bytes));
    for (std::size_t i = 0; i < n; ++i)
      if (rigs[i].ready) measure_loaded_transfers(rigs[i], plan, rep.figures.gpus[i], rep.errors);
    rep.writers_gbps = load.write_gbps();
  }

  // Release the registration before its memory, and time it.
  if (registration) {
    const auto t0 = Clock::now();
    registration.reset();
    if (!rep.reg.free_seconds) rep.reg.free_seconds = seconds_since(t0);
  }
  reg_buf.reset();

  rep.figures.host_alloc_s_per_gib = rep.alloc.s_per_gib();
  rep.figures.host_register_s_per_gib = rep.reg.s_per_gib();
  rep.verdict = doctor_verdict(rep.figures);

  if (opt.json)
    print_json(rep);
  else
    print_text(rep);
  if (rep.errors.list.empty()) return 0;
  std::fprintf(stderr, "stoker doctor: %s missing: %s%s\n",
               counted(rep.errors.list.size(), "figure").c_str(), rep.errors.list[0].c_str(),
               rep.errors.list.size() > 1 ? " (and more, listed above)" : "");
  return 1;
}

}  // namespace
}  // namespace doctor

int doctor_command(int argc, char** argv) {
  int status = 0;
  const auto opt = doctor::parse_options(argc, argv, status);
  if (!opt) return status;
  if (devices::cuda_device_count() == 0) {
    const char* problem = "no CUDA device visible: nothing to measure";
    if (opt->json) std::printf("%s\n", json_text(Json{{"ok", false}, {"error", problem}}).c_str());
    std::fprintf(stderr, "stoker doctor: %s\n", problem);
    return 1;
  }
  return doctor::run_doctor(*opt);
}

}  // namespace stoker::tools

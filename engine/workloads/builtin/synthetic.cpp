// synthetic as a registered workload: its options, make_synthetic_job, and
// the summary's banner and JSON fields.
#include "engine/workloads/synthetic.hpp"

#include <limits>

#include "engine/workloads/builtin/builtin_workloads.hpp"
#include "engine/workloads/builtin/shared.hpp"

namespace stoker::engine::workloads::builtin {
namespace {

Workload::Description synthetic_description() {
  Workload::Description d;
  d.name = "synthetic";
  d.summary =
      "integer mixing of pseudo-random words, four input words to one output word; "
      "copy-bound to compute-bound by --rounds";
  d.partitions_default = "16 per GPU, 8 on the host backend";
  d.verification = "every partition matches the CPU version";
  d.options = {
      WorkloadOption::integer(
          "size-mib", "M", 1, std::numeric_limits<std::size_t>::max() >> 20, "",
          "input MiB per partition (default: 256 on GPUs, 4 on the host backend)"),
      WorkloadOption::integer(
          "rounds", "R", 0, std::numeric_limits<int>::max(), "16",
          "integer mixing rounds per output word: 0 copy-bound .. 1000 compute-bound"),
      WorkloadOption::flag(
          "pageable",
          "inputs from caller-owned std::vector through pinned staging (default: pinned "
          "producers)"),
      WorkloadOption::flag("registered",
                           "inputs generated before the job in caller memory page-locked once: "
                           "the job copies and computes only, so a copy-bound run measures the "
                           "engine's H2D"),
      WorkloadOption::choice("output-memory", "M", {"registered", "pageable"}, "pageable",
                             "where outputs land: pageable (a pinned bounce block and a host "
                             "copy per partition) or registered (page-locked once before the "
                             "job, so the D2H writes them in place)"),
  };
  d.exclusive = {{"pageable", "registered"}};  // two kinds of input
  return d;
}

Result<WorkloadJob> make_synthetic(Engine& engine, const WorkloadRequest& request,
                                   const WorkloadValues& values) {
  const bool registered_inputs = values.given("registered");
  const bool registered_outputs = values.text("output-memory") == "registered";
  SyntheticOptions o;
  o.partitions = partitions_for(engine, request, 16);
  o.input_bytes = values.number<std::size_t>("size-mib").value_or(on_gpus(engine) ? 256 : 4) << 20;
  o.rounds = *values.number<int>("rounds");
  o.pageable = values.given("pageable");
  o.seed = request.seed;
  if (registered_inputs) o.registered_inputs = engine.devices().backend();
  if (registered_outputs) o.registered_outputs = engine.devices().backend();
  o.limits.pinned_budget_bytes = engine.config().host_budget_bytes;
  o.name = o.pageable ? "synthetic-pageable"
                      : (registered_inputs ? "synthetic-registered" : "synthetic-pinned");
  std::shared_ptr<SyntheticRun> run;
  auto job = make_synthetic_job(o, run);
  if (!job) return std::move(job).error();
  if (!request.verify) job->verify = nullptr;

  const std::string outputs = registered_outputs ? "registered" : "pageable";
  WorkloadJob out;
  out.job = std::move(*job);
  out.run = run;
  out.banner =
      printf_text("synthetic, %zu partitions x %zu MiB (%s inputs, %s outputs, %d rounds) %s\n",
                  o.partitions, o.input_bytes >> 20,
                  o.pageable ? "pageable" : (registered_inputs ? "registered" : "pinned-producer"),
                  outputs.c_str(), o.rounds, on_devices(engine).c_str());
  out.verifies = request.verify;
  out.verification = "every partition matches the CPU version";
  out.fields = [outputs](bool) {
    return std::vector<WorkloadField>{
        {"log_n", std::uint64_t{0}}, {"h_memory", std::string()}, {"output_memory", outputs}};
  };
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_synthetic_workload() {
  return make_workload(synthetic_description(), make_synthetic);
}

}  // namespace stoker::engine::workloads::builtin

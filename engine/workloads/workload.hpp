// Workload: a kind of job a program can run by name, with options it
// declares, so that a command line, a benchmark or a user's program runs it
// without knowing it (`stoker run --workload NAME`). The registry
// (workload_registry.hpp) holds the built-in ones (ntt_msm_h, hpoly,
// synthetic) and any a program adds.
//
// A workload says what it is (name, a summary line), which options it takes
// (workload_option.hpp: enough to parse them, check them, print their help
// and draw values for them), and builds a job for an engine from option
// values: the Job as the engine takes it (partitions, device work with its
// GPU and CPU versions, verify) plus what the caller needs after the job
// has run (its outputs, a banner for a summary, fields for a JSON summary,
// whether every partition was verified).
//
// Verification is the Job's own `verify`, as for any job: it runs on an
// engine worker after each partition and fails the job on a mismatch.
// A workload whose check can also leave partitions unchecked says so with
// WorkloadJob::all_verified.
//
// A workload of one's own (examples/custom_workload.cpp runs one in full):
//
//   Workload::Description d;
//   d.name = "scale";
//   d.summary = "multiplies floats by a factor";
//   d.options = {WorkloadOption::integer("factor", "F", 1, 100, "3", "the factor")};
//   auto scale = make_workload(std::move(d), [](Engine& engine, const WorkloadRequest& request,
//                                               const WorkloadValues& values)
//                                                -> Result<WorkloadJob> {
//     const auto factor = *values.number<unsigned>("factor");  // 3 when not given
//     WorkloadJob built;
//     ...  // built.job's partitions; built.run holding the outputs
//     return built;
//   });
//   workload_registry().add(std::move(scale));
//
// or a class derived from Workload that overrides make_job.
//
// Thread safety: a Workload is immutable once made; build() may run on
// several threads at once if make_job may.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "common/error.hpp"
#include "engine/engine.hpp"
#include "engine/job.hpp"
#include "engine/workloads/srs_source.hpp"
#include "engine/workloads/workload_option.hpp"
#include "engine/workloads/workload_values.hpp"

namespace stoker::engine::workloads {

// One field of what a workload adds to a run's JSON summary (`stoker run
// --json`): a key and a number, a flag, a text, a list of texts or fields
// nested under the key. Kept free of any JSON library so that the engine's
// headers need none.
struct WorkloadField {
  std::string key;
  std::variant<bool, std::uint64_t, double, std::string, std::vector<std::string>,
               std::vector<WorkloadField>>
      value;
};

// What a caller asks of a workload beside its options: the settings every
// job has.
struct WorkloadRequest {
  WorkloadValues values;
  std::optional<std::size_t> partitions;  // unset: the workload's default for the engine
  std::uint64_t seed = 1;                 // of the data
  bool verify = true;                     // check every partition on the CPU
  SrsSource srs;                          // resident points; unset: load_srs_or_toy
};

// A built job and what the caller needs once it has run.
struct WorkloadJob {
  Job job;
  // The builder's outputs (SyntheticRun, HpolyRun, NttMsmHRun, ...): the
  // job's closures hold them too; a caller that knows the workload reads
  // them through std::static_pointer_cast.
  std::shared_ptr<void> run;
  // The opening lines of a text summary, each ending in a newline: what
  // runs, at what size, verified or not.
  std::string banner;
  bool verifies = false;  // the job's verify checks its partitions
  // What a passed check showed, for "verified: ..." after the job.
  std::string verification;
  // After the job: every partition was checked and matched. Unset: a job
  // that succeeded with verifies set was verified (its verify fails it
  // otherwise).
  std::function<bool()> all_verified;
  // Set-up on the engine's GPUs that the timed job should not pay for
  // (tables, kernels to load), and what it makes, for a summary ("NTT
  // tables of 2^24"). Unset: none.
  std::function<std::error_code()> prepare;
  std::string prepare_what;
  // The workload's fields of a JSON summary, read after the job (`succeeded`:
  // it completed without an error).
  std::function<std::vector<WorkloadField>(bool succeeded)> fields;
};

class Workload {
 public:
  struct Description {
    std::string name;     // [a-z0-9_]+: what --workload takes
    std::string summary;  // one line: what a partition computes
    // The partitions a job gets by default, in words for help ("4 per GPU,
    // 8 on the host backend").
    std::string partitions_default;
    // What --verify checks, in words for help.
    std::string verification;
    std::vector<WorkloadOption> options;
    // Options that may not be given together (each group by name).
    std::vector<std::vector<std::string>> exclusive;
  };

  // Throws std::invalid_argument for a description that cannot work: a
  // name outside [a-z0-9_]+, two options of one name, an option whose
  // default is not one of its values, an exclusive group naming no option.
  explicit Workload(Description description);
  virtual ~Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  const std::string& name() const { return d_.name; }
  const std::string& summary() const { return d_.summary; }
  const std::string& partitions_default() const { return d_.partitions_default; }
  const std::string& verification() const { return d_.verification; }
  const std::vector<WorkloadOption>& options() const { return d_.options; }
  const std::vector<std::vector<std::string>>& exclusive() const { return d_.exclusive; }
  // The option called `name` (or with `name` as an alias), or null.
  const WorkloadOption* option(std::string_view name) const;

  // Whether `values` suit this workload: an Error (Errc::invalid_argument)
  // naming the first option it does not take, a value outside an option's
  // range or choices, two names of one option or two exclusive options.
  Error check(const WorkloadValues& values) const;

  // Checks request.values, then builds the job for `engine` (which it may
  // use: an SRS loaded on it, its devices, budgets and backend). Errors
  // name the problem; no exception escapes.
  Result<WorkloadJob> build(Engine& engine, const WorkloadRequest& request) const;

 protected:
  // The job, from values that check() accepted, under the options' own
  // names, with every default filled in.
  virtual Result<WorkloadJob> make_job(Engine& engine, const WorkloadRequest& request,
                                       const WorkloadValues& values) const = 0;

 private:
  Description d_;
};

// A Workload whose make_job is `make`: a workload without a class of its own.
using MakeWorkloadJob =
    std::function<Result<WorkloadJob>(Engine&, const WorkloadRequest&, const WorkloadValues&)>;
std::unique_ptr<Workload> make_workload(Workload::Description description, MakeWorkloadJob make);

}  // namespace stoker::engine::workloads

// RunWorkloadOptions: the registered workloads' options on `stoker run`'s
// command line (engine/workloads/workload_registry.hpp), so that the
// command knows no workload by name.
//
// - declare() puts every option any workload takes on the command line
//   once: a number is read within the widest range any workload allows
//   ("--log-n: '0' is not an integer in 1..28"), choices are the union, and
//   an option's other names and a workload's exclusive options are
//   exclusive there too.
// - choose() then picks the workload: the one --workload names; else the
//   one the first option given that a single workload takes implies
//   (--size-mib: synthetic, --h-memory: hpoly, --srs: ntt_msm_h); else the
//   first registered. An option given that it does not take is refused
//   naming the option and the workloads that take it ("--keep-h applies to
//   --workload ntt_msm_h, not hpoly"), a value outside its own range naming
//   the value ("--log-n 1: ntt_msm_h needs at least 2").
// - help() writes what --help says of them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "engine/workloads/workload.hpp"
#include "tools/cli/command_line.hpp"

namespace stoker::tools {

class RunWorkloadOptions {
 public:
  struct Choice {
    const engine::workloads::Workload* workload = nullptr;
    engine::workloads::WorkloadValues values;  // the options given, as given
  };

  explicit RunWorkloadOptions(std::vector<const engine::workloads::Workload*> workloads);

  // Declares every workload's options and "--workload W" on `cl`, which
  // must outlive this object's use of it; `workload` receives --workload's
  // value.
  void declare(CommandLine& cl, std::string& workload);
  // After cl.parse(): the workload and its values, or the problem, for a
  // usage error.
  Result<Choice> choose(const CommandLine& cl, const std::string& workload) const;

  // Help lines: --workload's choices, the default partitions and what
  // --verify checks per workload, and a section per workload.
  std::string workload_help() const;
  std::string partitions_help() const;
  std::string verify_help() const;
  std::string sections_help() const;

 private:
  // The workloads that take option `name` (by any of its names).
  std::vector<const engine::workloads::Workload*> takers(const std::string& name) const;

  std::vector<const engine::workloads::Workload*> workloads_;
  std::vector<std::string> declared_;         // "--log-n", each option's names once
  std::map<std::string, std::string> texts_;  // "--log-n" -> "12", as parsed
  std::map<std::string, bool> flags_;         // "--keep-h" -> given
};

// `text` wrapped at 96 columns after `lead`, which it is padded to 22
// columns (or put on a line of its own when longer), each further line
// indented 22: how stoker run's help lays out an option.
std::string help_entry(const std::string& lead, const std::string& text);

}  // namespace stoker::tools

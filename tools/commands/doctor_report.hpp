// What one `stoker doctor` run found, and its two printed forms: a text
// report for people (figures in tables, the verdict, the errors) and one
// JSON object for programs, where a missing or non-finite figure is null.
// Both print to stdout and never fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "devices/device_info.hpp"
#include "tools/commands/doctor_host_memory.hpp"
#include "tools/commands/doctor_plan.hpp"
#include "tools/commands/doctor_verdict.hpp"
#include "tools/commands/info_command.hpp"

namespace stoker::tools::doctor {

struct Report {
  Plan plan;
  HostFacts host;
  std::vector<const devices::DeviceInfo*> infos;  // one per GPU, in DeviceSet order
  double context_s = 0;
  CostFigure alloc, reg;
  DoctorFigures figures;
  std::vector<double> concurrent_per_gpu;  // event-timed GB/s during the all-GPU run
  std::optional<double> writers_gbps;
  std::vector<std::string> verdict;
  Errors errors;
};

void print_text(const Report& r);
void print_json(const Report& r);

}  // namespace stoker::tools::doctor

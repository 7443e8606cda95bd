// What `stoker run` prints around its job, whatever the workload: the
// engine's lines after the workload's banner, the text summary after the
// job, and the --json summary. Field names and wording are read by scripts
// (tools/scripts/ab) and checks (test/tools/cli_test.cpp): keep them.
#pragma once

#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/workload.hpp"
#include "tools/cli/json_output.hpp"

namespace stoker::tools {

// Device memory per partition (and how much is resident SRS), then each
// device and the CPUs its threads run on.
void print_engine_lines(const engine::Engine& engine, const engine::Partition& partition);

// After the job: the report's summary, what the producers achieved
// together, and what verification showed.
void print_summary(const engine::JobReport& report, bool succeeded,
                   const engine::workloads::WorkloadJob& built);

// A workload's fields as JSON, in their order.
Json json_fields(const std::vector<engine::workloads::WorkloadField>& fields);

// The --json summary; `extra` (the workload's and the run's fields) goes
// after the stage medians.
Json json_report(const engine::JobReport& report, const engine::Engine& engine, const Json& extra);

}  // namespace stoker::tools

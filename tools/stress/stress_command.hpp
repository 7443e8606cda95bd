#pragma once
namespace stoker::tools {
// stoker stress: the engine under a random job mix, faults, bad input and
// cancellations, with its invariants checked (see --help, docs/STRESS.md).
int stress_command(int argc, char** argv);
}  // namespace stoker::tools

// `stoker srs generate`: writes a toy SRS file, the H-query points
// [tau^i Z(tau) / delta] G of engine/workloads/toy_srs.hpp for 2^K
// constraints (2^K - 1 points), in the G1 point-file format
// (engine/g1_file.hpp) that `stoker msm` and the engine's SRS loading read.
// On a GPU where there is one, else (or with --cpu) on every CPU thread;
// the file has the same bytes either way.
//
// A toy SRS is for tests and benchmarks only: its secret follows from the
// seed, so anyone who knows the seed can forge proofs against it.
//
// Exit status as every command (tools/cli/command_line.hpp): 0 done, 1 a
// failure while running, 2 a usage error. No output file is left on a
// failure (tools/cli/output_file.hpp).
#pragma once

namespace stoker::tools {

// stoker srs generate --log-n K --seed S --out FILE [--cpu | --device N]
int srs_command(int argc, char** argv);

}  // namespace stoker::tools

// `stoker ntt`, `stoker hpoly`, `stoker bench ntt`, `stoker bench hpoly`:
// the kernels of kernels/ from the command line.
//
// Files are raw arrays of 32-byte little-endian canonical Fr elements. Input
// is checked before any GPU work (size 32 * 2^K, every element < r, matching
// a/b/c sizes, room on the device); the output is written to a temporary
// file next to the target and renamed, so a failure leaves no partial file.
// The GPU (device 0) is used when one exists, unless --cpu.
//
// Each returns the process exit status: 0 on success, 1 on failure, 2 for
// bad usage. argv[0] is the subcommand's name.
#pragma once

namespace stoker::tools {

// stoker ntt --log-n K --in FILE --out FILE [--inverse] [--coset] [--cpu]
int ntt_command(int argc, char** argv);
// stoker hpoly --a FILE --b FILE --c FILE --out FILE [--cpu]
int hpoly_command(int argc, char** argv);
// stoker bench ntt [--log-n 20,24,26] [--reps N] [--json] [--cpu]
int bench_ntt_command(int argc, char** argv);
// stoker bench hpoly [--log-n 20,24,26] [--reps N] [--json] [--cpu]
int bench_hpoly_command(int argc, char** argv);

}  // namespace stoker::tools

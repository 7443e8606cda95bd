// `stoker doctor`: measures how this machine can feed its GPUs and says which
// feeding path it needs. On every GPU, timed with CUDA events over several
// repetitions (median): H2D and D2H from cudaHostAlloc, pageable and
// cudaHostRegister'ed memory; H2D from pinned and pageable memory while host
// threads stream-write memory; H2D on all GPUs at once; peer copies between
// every pair of GPUs; and the wall-clock cost of cudaHostAlloc and
// cudaHostRegister per GiB. Then a plain verdict (tools/commands/doctor_verdict.hpp).
//
// Every CUDA call is checked: a failed measurement is reported and the rest
// still run. All pinned and registered memory is released before returning.
#pragma once

namespace stoker::tools {

// argv[0] is "doctor". Returns the process exit status: 0 when every
// measurement succeeded, 1 without a GPU or when a measurement failed,
// 2 for bad usage.
int doctor_command(int argc, char** argv);

}  // namespace stoker::tools

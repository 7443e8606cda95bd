// `stoker bench serve`: proofs through the daemon against the same proofs
// through the in-process API, with the daemon's latency per client count.
#pragma once

namespace stoker::tools {

// argv[0] is "serve". Returns 0 on success, 1 when a measurement failed,
// 2 for bad usage.
int bench_serve_command(int argc, char** argv);

}  // namespace stoker::tools

// `stoker bench alloc`: what the memory layer costs and buys.
//
// - cycle: one acquire/release of a PinnedPool block against a fresh
//   allocate_pinned + free per use (cudaHostAlloc/cudaFreeHost on CUDA), for
//   1 MiB, 64 MiB and 1 GiB blocks; target: pooled >= 1000x cheaper.
// - h2d (CUDA only): H2D from a PinnedVec against from a std::vector of the
//   same bytes, timed with CUDA timing events, median of repetitions.
// - throughput: pooled allocate/release cycles per second with N producer
//   threads (default 32), and the same for the free-list candidates alone
//   (std::mutex + vector vs boost::lockfree::stack) and the budget alone,
//   which is the measurement behind PinnedPool's choice of a mutex.
//
// Host timings use steady_clock (medians); nothing is guessed.
#pragma once

namespace stoker::tools {

// argv[0] is "alloc". Returns 0 on success, 1 when a measurement failed,
// 2 for bad usage.
int bench_alloc_command(int argc, char** argv);

}  // namespace stoker::tools

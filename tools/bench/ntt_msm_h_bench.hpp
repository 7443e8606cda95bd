// `stoker bench ntt_msm_h`: the GPU phase of a Groth16 prover (hpoly, then
// the MSM of h over the H-query points) through the engine, with the toy SRS
// resident (engine/workloads/ntt_msm_h_workload.hpp).
//
// 1. Steady state, for each size 2^K: the toy SRS of K made once (on GPU 0
//    where there is one) and loaded with Engine::load_srs (its time and
//    rate reported), the kernels prepared and the pools reserved; then a
//    warm-up job and --reps timed ones of --partitions partitions, without
//    verification. Beside the median wall time: the report's model bound,
//    the bound plus what a pipeline cannot hide (fill and drain), their
//    ratio, and per partition the medians of hpoly's, the MSM's and the
//    whole kernel time against sppark's figures (DESIGN.md). Before any
//    timing, one job of 2 partitions at the smallest size is verified
//    against the toy secret; the bench fails if it does not hold.
// 2. The naive baseline as found in the field against the engine, both with
//    --writers threads producing a, b, c: in the baseline each writer fills
//    pageable vectors and then, under one process-wide mutex, copies them in
//    synchronously, runs hpoly, copies the SRS points in from pinned host
//    memory, runs the MSM and copies the point back; the engine runs the
//    same partitions with the SRS resident and --writers producer threads.
//    The two take turns, a warm-up turn and --reps timed ones. GPU only.
//
// A size that does not fit the device or host budgets is skipped and said
// so, not failed.
#pragma once

namespace stoker::tools {

// argv[0] is "ntt_msm_h". 0 done, 1 a failure (including a point that does
// not verify), 2 a usage error.
int bench_ntt_msm_h_command(int argc, char** argv);

}  // namespace stoker::tools

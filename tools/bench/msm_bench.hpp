// `stoker bench msm`: the GPU Pippenger MSM (kernels/msm.hpp) at 2^K points.
//
// For each size, on random points (made on the GPU, kernels/msm_inputs_gpu.cu)
// and random scalars below 2^254, median of --reps runs after a warm-up,
// timed with CUDA timing events:
// - e2e: from pinned host memory, as sppark's reference figure is timed:
//   scalars and points copied in, the point copied out. The points travel
//   on a second stream while the scalars are turned into sorted entries
//   (msm_sort_scalars), and the bucket sums wait for them by an event;
// - resident: points and scalars already on the device (the engine's case);
// - sparse: resident, with witness-like scalars (40 % 0, 50 % 1, 10 % random).
// - split: the same scalars through sparse_msm (split on the host first),
//   and its two parts alone: the ones' sum, the rest's Pippenger.
// Every MSM leaves its window sums, copied to the host in the timed span and
// finished there; that finish's time on one core is part of each figure.
// --scalars dense|sparse runs half of that.
// Beside each: the model's bound, n * W mixed additions and 2 W 2^(c-1)
// XYZZ additions at the rates a micro-kernel measures on this GPU (e2e:
// plus the scalars' copy, and the points' copy where it is longer than the
// sort), and sppark's figure where one was measured. --group g2 runs the
// same on G2 points (192 bytes) with G2's addition rates (no sppark figure).
#pragma once

namespace stoker::tools {

// argv[0] is "msm". 0 on success, 1 when a measurement failed, 2 for bad usage.
int bench_msm_command(int argc, char** argv);

}  // namespace stoker::tools

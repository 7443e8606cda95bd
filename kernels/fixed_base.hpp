// Fixed-base scalar multiplication in G1 and G2: out[i] = [s_i] G for the
// group's generator G and many scalars s_i (Fr, Montgomery form as
// everywhere), results affine in Montgomery form, as the MSM takes its
// points. This is how a toy SRS and a toy key are made: one scalar per
// point, all on the same base.
//
// Method: the scalar's canonical value is cut into 32 windows of 8 bits (a
// byte each, r < 2^255), and a table holds [d 2^(8w)] G for every window w
// and digit d in 1..255 (32 * 255 affine points: 765 KiB in G1, 1.5 MiB in
// G2). A point is then one mixed XYZZ addition per non-zero byte (at most
// 32, against about 128 for a table of powers of two) and one inversion
// (to_affine): about 900 Fq products per G1 point, where the inversion is
// most of the rest; a G2 addition costs about 3 of G1's
// (detail/msm_group.hpp). Bytes keep the digit extraction a shift, and the
// table small enough to stay in the GPU's L2 cache (a 16-bit window would
// need 48 MiB in G1 for half the additions). The sums never meet the
// special cases of the addition: every partial sum is [m] G with m below
// the next term's multiple, and the whole sum is below r.
//
// gpu:: takes device pointers of the current device and enqueues on
// `stream`; it allocates nothing: the table is built in the caller's scratch
// (fixed_base_scratch_bytes of the group, 16-byte aligned) by a small kernel
// at each call (8160 threads, well under a millisecond of work against
// ~0.4 s per 2^24 G1 points). Calls that share a scratch buffer must be
// ordered by the caller. cpu:: builds its table once per process and group
// (thread-safe), converts to affine with one shared inversion per batch of
// points, and spreads the points over threads. Both give the same bits: an
// affine point in Montgomery form has one representation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"  // MsmGroup

namespace stoker::kernels {

namespace gpu {
// Scratch bytes fixed_base_mul needs in `group` (the table; the same for
// every n).
std::size_t fixed_base_scratch_bytes(MsmGroup group, std::size_t n);
// The same in G1.
std::size_t fixed_base_scratch_bytes(std::size_t n);
// d_out[i] = [d_scalars[i]] G, affine. d_out 16-byte aligned, d_scalars
// 32-byte aligned (cudaMalloc's are). Errors: null or misaligned pointers,
// too little scratch, a failed launch.
std::error_code fixed_base_mul(G1Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                               std::size_t scratch_bytes, cudaStream_t stream);
// The same in G2 with G2's generator (its own translation unit: G2's
// kernels compile slowly).
std::error_code fixed_base_mul(G2Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                               std::size_t scratch_bytes, cudaStream_t stream);
}  // namespace gpu

namespace cpu {
// out[i] = [scalars[i]] G, affine; threads == 0: hardware threads.
void fixed_base_mul(G1Affine* out, const Fr* scalars, std::size_t n, unsigned threads = 0);
// The same in G2 with G2's generator: a G2 point costs about 32 mixed
// additions instead of about 380 doublings and additions by double-and-add.
void fixed_base_mul(G2Affine* out, const Fr* scalars, std::size_t n, unsigned threads = 0);
}  // namespace cpu

}  // namespace stoker::kernels

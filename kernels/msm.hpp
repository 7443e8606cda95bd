// Multi-scalar multiplication over G1 or G2 of BLS12-381: sum_i s_i P_i
// for points P_i (affine, g1.cuh or g2.cuh) and scalars s_i (Fr, Montgomery
// form, as the NTT and hpoly leave them), by Pippenger's bucket method.
// Both groups run the same code (kernels/detail/msm_group.hpp says what
// differs): the functions below come in one overload per point type, and
// those that take no point say which group by an MsmGroup (G1 when left
// out).
//
// gpu:: functions take device pointers of the current device, enqueue on
// `stream` and return at once; they allocate nothing (scratch comes from the
// caller, sized by msm_scratch_bytes or plan_msm), and errors (bad sizes or
// alignment, too little scratch, launch failures) come back as
// std::error_code. Thread safe; calls sharing a scratch buffer must be
// ordered by the caller (one stream, or events).
//
// cpu:: is the multithreaded reference; to_affine of both results gives
// the same bits. Its functions are thread safe and allocate their scratch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <system_error>
#include <vector>

#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels {

enum class MsmGroup : std::uint8_t { g1, g2 };

namespace gpu {

// The shape of one MSM on one device (see kernels/detail/msm_window.hpp):
// window size c from n and the device by a cost model (or forced), W =
// ceil(255 / c) windows of 2^(c-1) buckets each (signed digits), entries
// summed per thread, and the scratch bytes all that takes.
struct MsmPlan {
  MsmGroup group = MsmGroup::g1;  // the points' group; calls for the other group refuse the plan
  std::size_t n = 0;
  unsigned window_bits = 0;   // c
  unsigned windows = 0;       // W
  std::uint32_t buckets = 0;  // per window
  std::size_t entries = 0;    // n * W sort entries
  bool window_sorts = false;  // each window's entries sorted on their own (one part)
  unsigned slice = 0;         // entries summed by one thread (a lane, with accumulate_batch)
  // The bucket sums' first level: 0, mixed additions, a slice a thread; or
  // batched affine additions, this many lanes of `slice` entries a thread
  // (plan_batch_affine_buckets).
  unsigned accumulate_batch = 0;
  // The reduction's first level: 2^this buckets a thread (1..6; later
  // levels fold 2^3). plan_reduce_fold sets a smaller one.
  unsigned reduce_first_log = 6;
  static constexpr unsigned kMaxParts = 4;
  unsigned parts = 1;  // ranges of points summed one after the other
  // Part k is points [part_begin[k], part_begin[k + 1]); part_begin[parts] = n.
  std::size_t part_begin[kMaxParts + 1] = {};
  std::size_t sort_temp_bytes = 0;
  std::size_t scratch_bytes = 0;
};

// window_bits 0: chosen by the cost model among the sizes whose scratch
// fits in half the device's memory. n must leave n * W below 2^31.
// parts (1..4): the points' ranges msm_add_points takes one at a time, so
// that a part's additions run while the next part's points are being copied
// in. The first part is half the size of the others: its copy runs under
// the sort, which is shorter than a full share's copy. A later part costs
// one more mixed addition per bucket (its runs start from the bucket).
std::error_code plan_msm(MsmGroup group, std::size_t n, int device, MsmPlan& plan,
                         unsigned window_bits = 0, unsigned parts = 1);
inline std::error_code plan_msm(std::size_t n, int device, MsmPlan& plan, unsigned window_bits = 0,
                                unsigned parts = 1) {
  return plan_msm(MsmGroup::g1, n, device, plan, window_bits, parts);
}
// The plan's bucket sums by batched affine additions instead of mixed ones
// (detail/accumulate_batch_affine.cuh: about 0.8x the Fq products in G2,
// no gain in G1), `batch` lanes a thread, threads_per_sm threads an SM
// (0: the defaults below; batch 0: detail::accumulate_batch's choice where
// lanes get kAccumulateBatchLeastSlice entries, else kAccumulateBatch),
// with the scratch that takes (each lane an affine accumulator and a prefix
// product, and a head). One part only; refused (the plan left as it was)
// where the scratch would pass half the device's memory.
inline constexpr unsigned kAccumulateBatch = 128;
inline constexpr unsigned kAccumulateBatchThreadsPerSm = 256;
// plan_sparse_msm's automatic choice: a G2 rest's buckets by batched affine
// additions where each lane gets at least this many entries (its heads'
// and inversions' share per entry small enough), mixed additions elsewhere.
inline constexpr unsigned kAccumulateBatchLeastSlice = 20;
std::error_code plan_batch_affine_buckets(MsmPlan& plan, int device, unsigned batch = 0,
                                          unsigned threads_per_sm = 0);
// The reduction's first level folding 2^first_log buckets a thread (1..6)
// instead of 2^6, with the scratch that takes. At c = 17 the 2^6 fold
// leaves 15 windows' 2^16 buckets to 15360 threads of 128 XYZZ additions,
// fewer than half of what an H200 keeps resident in G2; 2^3 gives 122880
// threads of 16 and one more level. Refused (the plan left as it was) as
// plan_batch_affine_buckets; a plan of no points is left as it is.
std::error_code plan_reduce_fold(MsmPlan& plan, int device, unsigned first_log);
// plan_msm(group, n, device).scratch_bytes; 0 when n is too large or the
// device cannot be queried.
std::size_t msm_scratch_bytes(MsmGroup group, std::size_t n, int device);
inline std::size_t msm_scratch_bytes(std::size_t n, int device) {
  return msm_scratch_bytes(MsmGroup::g1, n, device);
}

// *d_result = sum_i d_scalars[i] * d_points[i], in XYZZ form. Points and
// scalars 16-byte aligned, scratch 256-byte aligned (cudaMalloc's are).
// The plan is plan_msm(the points' group, n, current device).
std::error_code msm(G1Xyzz* d_result, const G1Affine* d_points, const Fr* d_scalars, std::size_t n,
                    void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream);
std::error_code msm(G2Xyzz* d_result, const G2Affine* d_points, const Fr* d_scalars, std::size_t n,
                    void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream);
// The same with a plan of the caller's (same n and group, a forced window
// size).
std::error_code msm(const MsmPlan& plan, G1Xyzz* d_result, const G1Affine* d_points,
                    const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                    cudaStream_t stream);
std::error_code msm(const MsmPlan& plan, G2Xyzz* d_result, const G2Affine* d_points,
                    const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                    cudaStream_t stream);
// msm in steps, so that the points may still be on their way while the
// scalars are turned into sorted bucket entries, and a part's additions may
// run while the next part's points arrive. In this order, on one scratch:
// msm_sort_scalars reads only the scalars; msm_add_points(part) for each
// part reads only points [part_begin[part], part_begin[part + 1]) (given
// the base of all points); msm_finish reduces the buckets to the result.
// msm is these in a row. The sort is the same for both groups (only where
// it lies in the scratch depends on the plan's group).
std::error_code msm_sort_scalars(const MsmPlan& plan, const Fr* d_scalars, void* d_scratch,
                                 std::size_t scratch_bytes, cudaStream_t stream);
std::error_code msm_add_points(const MsmPlan& plan, unsigned part, const G1Affine* d_points,
                               void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream);
std::error_code msm_add_points(const MsmPlan& plan, unsigned part, const G2Affine* d_points,
                               void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream);
std::error_code msm_finish(const MsmPlan& plan, G1Xyzz* d_result, void* d_scratch,
                           std::size_t scratch_bytes, cudaStream_t stream);
std::error_code msm_finish(const MsmPlan& plan, G2Xyzz* d_result, void* d_scratch,
                           std::size_t scratch_bytes, cudaStream_t stream);

// A sparse MSM: the scalars of a witness's queries are mostly 0 and 1.
// Split by value (cpu::split_scalars does it on the host, where a prover's
// witness is): zeros are left out; the points whose scalar is 1 are summed
// without a sort or buckets, one addition per point (see OnesSum), each
// thread a share of them, then the threads' sums by XYZZ additions; the
// rest go through the Pippenger above over their own points, read through
// their indices (no copy). *d_result = sum_j P[ones[j]] + sum_j
// rest_scalars[j] P[rest[j]]. The dense path sorts W entries for every
// scalar, zeros and ones too, and reduces buckets sized for all n points.
//
// How the ones are summed:
// - mixed_additions: each thread a contiguous slice by mixed XYZZ
//   additions (28 Fq products a G2 addition, 10 in G1);
// - batch_affine: each thread a strided share by affine additions, a batch
//   of them sharing one inversion (detail/ones_batch_affine.cuh: about 20.6
//   Fq products a G2 addition, 9.6 in G1), with batch accumulators per
//   thread in scratch (1.2 GB in G2 at 2^25 ones);
// - automatic: batch_affine in G2 where every thread gets at least
//   kOnesBatchRounds batches, mixed_additions otherwise.
enum class OnesSum : std::uint8_t { automatic, mixed_additions, batch_affine };
// When the ones' sum starts, where there are both parts (each on a stream
// of its own): with the rest (its blocks take what the rest's sort and
// bucket sums leave free), or once the rest's bucket sums are done (it then
// runs beside the rest's joins and reduction, chains of dependent additions
// on few threads).
enum class OnesStart : std::uint8_t { with_the_rest, after_the_buckets };
// How the rest's bucket sums add their points: by mixed additions, or by
// batched affine additions (plan_batch_affine_buckets); automatic: batched
// affine in G2 where lanes get kAccumulateBatchLeastSlice entries and the
// scratch fits, mixed otherwise.
enum class BucketSum : std::uint8_t { automatic, mixed_additions, batch_affine };
inline constexpr unsigned kOnesBatch = 128;       // accumulators per thread
inline constexpr unsigned kOnesBatchRounds = 4;   // automatic's least rounds
inline constexpr unsigned kOnesBatchThreadsPerSm = 256;
struct SparseMsmPlan {
  MsmGroup group = MsmGroup::g1;
  std::size_t ones = 0;  // points with scalar 1
  OnesSum ones_sum = OnesSum::mixed_additions;  // never automatic in a plan
  std::size_t ones_threads = 0;  // the first level's threads, a share each
  std::size_t ones_slice = 0;    // mixed_additions: points per thread
  unsigned ones_batch = 0;       // batch_affine: accumulators per thread
  std::size_t ones_accumulators_at = 0, ones_prefixes_at = 0;  // batch_affine
  OnesStart ones_start = OnesStart::with_the_rest;
  MsmPlan rest;                     // the Pippenger over the rest (rest.n of them), scratch first
  std::size_t partials_at[2] = {};  // the levels' sums, alternating
  std::size_t scratch_bytes = 0;
};
// What a caller may force; zeros take the defaults.
struct SparseMsmShape {
  unsigned rest_window_bits = 0;  // the rest's window as plan_msm's `window_bits`
  OnesSum ones_sum = OnesSum::automatic;
  unsigned ones_batch = 0;           // batch_affine: accumulators per thread, kOnesBatch
  unsigned ones_threads_per_sm = 0;  // batch_affine: kOnesBatchThreadsPerSm
  OnesStart ones_start = OnesStart::with_the_rest;
  BucketSum rest_buckets = BucketSum::automatic;
  unsigned rest_bucket_batch = 0;           // batch_affine: lanes a thread, the plan's choice
  unsigned rest_bucket_threads_per_sm = 0;  // batch_affine: kAccumulateBatchThreadsPerSm
  // plan_reduce_fold's; 0: in G2 detail::reduce_first_log's choice, in G1
  // plan_msm's 2^6.
  unsigned rest_reduce_first_log = 0;
};
std::error_code plan_sparse_msm(MsmGroup group, std::size_t ones, std::size_t rest, int device,
                                SparseMsmPlan& plan, const SparseMsmShape& shape = {});
// Indices (u32) and rest scalars 16-byte aligned, points 16-byte aligned,
// scratch 256-byte aligned; indices below 2^31 and within the points.
std::error_code sparse_msm(const SparseMsmPlan& plan, G1Xyzz* d_result, const G1Affine* d_points,
                           const std::uint32_t* d_ones, const std::uint32_t* d_rest,
                           const Fr* d_rest_scalars, void* d_scratch, std::size_t scratch_bytes,
                           cudaStream_t stream);
std::error_code sparse_msm(const SparseMsmPlan& plan, G2Xyzz* d_result, const G2Affine* d_points,
                           const std::uint32_t* d_ones, const std::uint32_t* d_rest,
                           const Fr* d_rest_scalars, void* d_scratch, std::size_t scratch_bytes,
                           cudaStream_t stream);

// An MSM's sum left as its windows' sums, for the host to finish:
//   result = extra + sum_w 2^(c w) (y_w + s_w)
// (cpu::finish_window_sums), instead of gpu::msm's Horner over the windows
// in one GPU thread. Those ~255 dependent doublings take 4.9 ms in G1 and
// 14.4 ms in G2 on an H200 (ncu, any size: a lone thread waits out every
// product's latency, ~1.7 us per Fq product), against about 0.1 ms and
// 0.3 ms on one CPU core, and the sums go to the host anyway (a proof is
// assembled there). The bytes: a header, then y[W], s[W] and extra as XYZZ
// points of the group; sparse_msm's ones are its extra, infinity elsewhere.
// W == 0: the MSM had no point beyond the extra.
struct MsmWindowSumsHeader {
  std::uint32_t group;  // MsmGroup
  std::uint32_t windows;
  std::uint32_t window_bits;
  std::uint32_t reserved;
};
inline constexpr unsigned kMsmMaxWindows = 128;  // c >= 2
inline constexpr std::size_t window_sums_bytes(MsmGroup group, unsigned windows) {
  return sizeof(MsmWindowSumsHeader) +
         (2 * std::size_t{windows} + 1) * (group == MsmGroup::g2 ? sizeof(G2Xyzz) : sizeof(G1Xyzz));
}
inline std::size_t window_sums_bytes(const MsmPlan& p) {
  return window_sums_bytes(p.group, p.n ? p.windows : 0);
}
inline std::size_t window_sums_bytes(const SparseMsmPlan& p) {
  return window_sums_bytes(p.group, p.rest.n ? p.rest.windows : 0);
}
// d_sums: 16-byte aligned, window_sums_bytes(plan) of them.
std::error_code msm_window_sums(const MsmPlan& plan, void* d_sums, const G1Affine* d_points,
                                const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                                cudaStream_t stream);
std::error_code msm_window_sums(const MsmPlan& plan, void* d_sums, const G2Affine* d_points,
                                const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                                cudaStream_t stream);
// msm_finish's counterpart, after msm_sort_scalars and msm_add_points.
std::error_code msm_finish_window_sums(const MsmPlan& plan, MsmGroup group, void* d_sums,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream);
std::error_code sparse_msm_window_sums(const SparseMsmPlan& plan, void* d_sums,
                                       const G1Affine* d_points, const std::uint32_t* d_ones,
                                       const std::uint32_t* d_rest, const Fr* d_rest_scalars,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream);
std::error_code sparse_msm_window_sums(const SparseMsmPlan& plan, void* d_sums,
                                       const G2Affine* d_points, const std::uint32_t* d_ones,
                                       const std::uint32_t* d_rest, const Fr* d_rest_scalars,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream);

// *d_first_bad = the smallest i with d_points[i] off the curve or outside
// G1 (the point at infinity passes), or n when every point is good.
std::error_code check_points(std::uint64_t* d_first_bad, const G1Affine* d_points, std::size_t n,
                             cudaStream_t stream);
// The same check in pieces, so that points are checked as they arrive and
// several devices share one check: check_points_begin sets *d_first_bad = n
// (nothing bad yet); each check_points_range lowers it to the smallest bad
// index of [begin, end), indices counted from d_points. Ranges may come in
// any order, on any streams the caller orders after the begin.
std::error_code check_points_begin(std::uint64_t* d_first_bad, std::size_t n, cudaStream_t stream);
std::error_code check_points_range(std::uint64_t* d_first_bad, const G1Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream);
// The same over G2 points (on E' and in G2), indices counted in G2 points.
std::error_code check_points_range(std::uint64_t* d_first_bad, const G2Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream);

// The batched check: what check_points_range answers, for a fraction of
// the work. Each point of the range is checked on the curve (or E'); for
// the group, each point joins one random bucket in each of W windows
// (coins from ChaCha20 under `key`), the buckets are summed as a
// Pippenger's are, and each bucket's sum is tested exactly: a range holding
// a point outside the group passes with probability at most 2^-64
// (detail/point_check_batch.hpp says why), for W mixed additions a point
// and W 2^c tests a range, against a test of each point (about 100
// additions' worth in G1). Only where a point or a sum fails is each point
// of the range tested (check_points_range), which names the smallest bad
// index as the plain check does. Below kBatchCheckFrom points a range is
// cheaper tested point by point.
struct PointCheckKey {
  std::uint32_t words[8] = {};
};
// A key from the OS CSPRNG (getrandom): a file's author who cannot know it
// cannot place points that pass.
std::error_code random_point_check_key(PointCheckKey& key);

inline constexpr std::size_t kBatchCheckFrom = 4096;

// The shape for ranges of up to max_points points on `device`: the bucket
// size (c bits) and windows (W, c W >= 64), and the scratch every such
// range needs (256-byte aligned; the device's for one range at a time).
struct BatchCheckPlan {
  MsmGroup group = MsmGroup::g1;
  std::size_t max_points = 0;
  unsigned bucket_bits = 0;
  unsigned windows = 0;
  unsigned slice = 0;         // entries summed by one thread (a lane, with accumulate_batch)
  // The bucket sums' first level: 0, mixed additions, a slice a thread; or
  // batched affine additions, this many lanes of `slice` entries a thread
  // (plan_batch_affine_buckets).
  unsigned accumulate_batch = 0;
  std::size_t flag_at = 0;    // the range's "something failed" word in the scratch
  std::size_t scratch_bytes = 0;
};
std::error_code plan_batch_check(MsmGroup group, std::size_t max_points, int device,
                                 BatchCheckPlan& plan);
// Lowers *d_first_bad (set by check_points_begin) to the smallest bad index
// of [begin, end) as check_points_range does, end - begin <= max_points.
// Ranges sharing a scratch must be ordered (one stream, or events).
std::error_code check_points_batched(const BatchCheckPlan& plan, std::uint64_t* d_first_bad,
                                     const G1Affine* d_points, std::size_t begin, std::size_t end,
                                     const PointCheckKey& key, void* d_scratch,
                                     std::size_t scratch_bytes, cudaStream_t stream);
std::error_code check_points_batched(const BatchCheckPlan& plan, std::uint64_t* d_first_bad,
                                     const G2Affine* d_points, std::size_t begin, std::size_t end,
                                     const PointCheckKey& key, void* d_scratch,
                                     std::size_t scratch_bytes, cudaStream_t stream);

// Pseudo-random inputs for tests and benchmarks
// (kernels/detail/msm_random_points.cuh says how the points are made).
// random_points needs
// random_points_scratch_bytes(group, n) of scratch, 16-byte aligned.
// `sparse` scalars are 40 % zeros, 50 % ones and 10 % full-size values.
std::size_t random_points_scratch_bytes(MsmGroup group, std::size_t n);
inline std::size_t random_points_scratch_bytes(std::size_t n) {
  return random_points_scratch_bytes(MsmGroup::g1, n);
}
std::error_code random_points(G1Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                              std::size_t scratch_bytes, cudaStream_t stream);
std::error_code random_points(G2Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                              std::size_t scratch_bytes, cudaStream_t stream);
std::error_code random_scalars(Fr* d_out, std::size_t n, std::uint64_t seed, bool sparse,
                               cudaStream_t stream);

}  // namespace gpu

namespace cpu {

// How msm treats scalars 0 and 1, the bulk of a witness. `always`: zeros are
// dropped, the ones' points summed by batched affine additions (as
// sum_points), and only the rest go through the buckets. `never`: every
// scalar goes through the buckets. `automatic`: `always` when enough of the
// scalars are 0 or 1 for that to pay (msm_cpu.cpp says how many). The
// result is the same point either way; the choice is for tests and
// measurements.
enum class MsmSplit { automatic, never, always };

// Scalars split by value for gpu::sparse_msm: the indices of the ones, and
// the indices and values of the rest; zeros are left out. Indices ascend.
struct ScalarSplit {
  std::vector<std::uint32_t> ones, rest;
  std::vector<Fr> rest_scalars;
};
ScalarSplit split_scalars(const Fr* scalars, std::size_t n, unsigned threads = 1);

// The same split in two passes over ranges of the scalars, on many threads:
// count_split counts each range's ones and others, and split_scalars_into
// writes each range's part at its place in arrays the caller sized from the
// totals (a proof's packed input, with no vector grown and copied). At 2^24
// a witness's query is 21M scalars: one thread took ~100 ms for it.
struct ScalarSplitCounts {
  std::size_t ones = 0, rest = 0;
  std::size_t range_size = 1;
  // Per range, the ones and others before it.
  std::vector<std::size_t> ones_before, rest_before;
};
ScalarSplitCounts count_split(const Fr* scalars, std::size_t n, unsigned threads = 0);
void split_scalars_into(const ScalarSplitCounts& counts, const Fr* scalars, std::size_t n,
                        std::uint32_t* ones, std::uint32_t* rest, Fr* rest_scalars,
                        unsigned threads = 0);

// The sum that gpu::msm_window_sums or gpu::sparse_msm_window_sums left in
// `sums` (copied to the host). Errors: too few bytes for the header's
// windows, a header of the other group or out of range.
std::error_code finish_window_sums(const void* sums, std::size_t bytes, G1Xyzz& out);
std::error_code finish_window_sums(const void* sums, std::size_t bytes, G2Xyzz& out);

// threads == 0: std::thread::hardware_concurrency().
G1Xyzz msm(const G1Affine* points, const Fr* scalars, std::size_t n, unsigned threads = 0);
G2Xyzz msm(const G2Affine* points, const Fr* scalars, std::size_t n, unsigned threads = 0);
G1Xyzz msm(const G1Affine* points, const Fr* scalars, std::size_t n, unsigned threads,
           MsmSplit split);
G2Xyzz msm(const G2Affine* points, const Fr* scalars, std::size_t n, unsigned threads,
           MsmSplit split);

// points[0] + ... + points[n - 1] by a tree of affine additions that share
// one field inversion per level (detail/batch_affine_sum.hpp); points at
// infinity, repeated points and opposite points may be among them.
G1Xyzz sum_points(const G1Affine* points, std::size_t n, unsigned threads = 0);
G2Xyzz sum_points(const G2Affine* points, std::size_t n, unsigned threads = 0);

// The smallest i with points[i] off the curve (E for G1, E' for G2) or
// outside the group (the point at infinity passes), or n when every point
// is good; on `threads` threads (0: hardware). From 4096 points on, the
// group is checked by random buckets as the GPU's check_points_batched
// does (coins from the OS CSPRNG), each bucket's sum tested exactly: a
// point outside the group passes with probability at most 2^-64, for 4-16
// mixed additions a point against about 100 additions' worth of products
// to test each point (point_check_cpu.cpp); only a failed sum leads to the
// test of each point, which names the first bad one.
std::size_t check_points(const G1Affine* points, std::size_t n, unsigned threads = 0);
std::size_t check_points(const G2Affine* points, std::size_t n, unsigned threads = 0);
}  // namespace cpu

}  // namespace stoker::kernels

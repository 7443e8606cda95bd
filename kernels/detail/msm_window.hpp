// The shape of a GPU Pippenger run: window size, window count, bucket count,
// entries per accumulating thread and the reduction's group size, with the
// cost model that picks the window size. Plain host arithmetic, so the host
// tests check it and msm_scratch_bytes and msm agree on it by construction.
//
// Scalars are made smaller than r/2 < 2^254 first (k > r/2 becomes r - k
// with the point negated), so ceil(255 / c) signed windows of c bits hold
// every scalar: the top window then has at most c - 1 bits and its digit
// plus the carry from below stays within 2^(c-1). A window's digits d lie in
// [-2^(c-1), 2^(c-1)]; |d| picks one of 2^(c-1) buckets and 0 none.
//
// Cost model, in mixed additions (XYZZ + affine), measured ceilings from
// DESIGN.md: every non-zero digit costs one mixed addition (n * W); the
// reduction costs two XYZZ additions per bucket (running sums), each
// 2.67 / 1.86 = 1.44 mixed additions; the sort's passes over 8-byte pairs
// cost about 1 % of a mixed addition per entry and pass, so they tip only
// between window sizes that are otherwise close. For G2 the additions (not
// the sort) cost addition_cost times as much (msm_group.hpp says why 3).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace stoker::kernels::gpu::detail {

inline constexpr unsigned kScalarBits = 255;   // r < 2^255
inline constexpr unsigned kMinWindowBits = 2;  // one bucket per window below this
inline constexpr unsigned kMaxWindowBits = 26;
// An entry's value is a point index with the sign in bit 31.
inline constexpr std::uint64_t kMaxEntries = (std::uint64_t{1} << 31) - 1;
// The reduction's first level folds this many buckets into one item, the
// later levels this many items (powers of two). The later levels are small
// (W 2^(c-1) / 64 items and less), so their time is one thread's chain of
// additions: groups of 64 there took 7 ms of a 2^24 MSM, groups of 8 give
// each level enough threads and a chain of 24 additions.
inline constexpr unsigned kReduceFirstGroupLog = 6;
inline constexpr unsigned kReduceGroupLog = 3;
// Where 2^6 buckets a thread leaves the first level fewer than a quarter of
// the threads the device holds, fold fewer, down to 2^3: a sparse 2^26 G2
// rest (c = 17, W = 15) gets 122880 threads of 16 additions instead of
// 15360 of 128, 3.8 ms less of its 157.8 on an H200. Below 2^19 buckets the
// level is short anyway and a smaller fold only adds a level.
inline constexpr std::uint64_t kReduceRefineFrom = std::uint64_t{1} << 19;
constexpr unsigned reduce_first_log(std::uint64_t buckets, std::uint64_t device_threads) {
  unsigned log = kReduceFirstGroupLog;
  if (buckets >= kReduceRefineFrom)
    while (log > kReduceGroupLog && (buckets >> log) < device_threads / 4) --log;
  return log;
}

// Batched affine additions, in Fq products (accumulate_batch_affine.cuh,
// ones_batch_affine.cuh count them): a mixed addition (an accumulator's or
// a head's first point), an affine addition with its share of Montgomery's
// trick, and a field inversion (x^(q-2) by a sliding window; Fq2's adds its
// norm).
struct AffineStepProducts {
  double mixed, affine, inversion;
};
inline constexpr AffineStepProducts kG1AffineSteps{10, 6, 463};
inline constexpr AffineStepProducts kG2AffineSteps{28, 17, 467};

// The affine buckets' lanes a thread where the caller does not force them.
// A thread walks `batch` lanes of slice = ceil(entries / (threads * batch))
// entries each: the first round opens the accumulators, each of the
// slice - 1 after it is batch affine additions and one inversion, and each
// lane's head is a mixed addition. The slice's rounding up makes some
// batches cost more than their neighbours: a sparse 2^26 G2 rest (100.7M
// entries, 33792 threads on an H100 or H200) walks 128 lanes of 24 entries
// (3072 a thread) or 149 of 20 (2980); measured on an H100, its rest
// 155.6-156.9 ms at 128 against 152.3-152.8 at 149. Among
// kAccumulateBatchLeast..kAccumulateBatchMost the batch of least work
// whose lanes get at least least_slice entries (the least first on a tie);
// 0 where none does. From 128 up: where 128 lanes would be too short the
// plan keeps mixed additions, as measured, rather than fewer, longer lanes.
inline constexpr unsigned kAccumulateBatchLeast = 128;
inline constexpr unsigned kAccumulateBatchMost = 160;
constexpr unsigned accumulate_batch(std::uint64_t entries, std::uint64_t threads,
                                    unsigned least_slice, const AffineStepProducts& p) {
  unsigned best = 0;
  double best_work = 0;
  if (entries == 0 || threads == 0) return 0;
  for (unsigned batch = kAccumulateBatchLeast; batch <= kAccumulateBatchMost; ++batch) {
    const std::uint64_t lanes = threads * batch;
    const std::uint64_t slice = (entries + lanes - 1) / lanes;
    if (slice < least_slice) continue;
    const double work =
        double(slice - 1) * (batch * p.affine + p.inversion) + double(batch) * p.mixed;
    if (best == 0 || work < best_work) {
      best = batch;
      best_work = work;
    }
  }
  return best;
}

inline constexpr double kXyzzPerMixed = 2.67 / 1.86;
inline constexpr double kSortPassPerEntry = 0.01;

constexpr unsigned window_count(unsigned c) {
  return (kScalarBits + c - 1) / c;
}
constexpr std::uint32_t buckets_per_window(unsigned c) {
  return std::uint32_t{1} << (c - 1);
}

// The points may be split into `parts` ranges of consecutive indices, each
// summed by its own launches (so that a part's additions can run while the
// next part's points are still being copied in). A key is
//   part * W * 2^(c-1) + window * 2^(c-1) + |digit| - 1,
// and kNoKey (below) marks a zero digit (no bucket): its low key_bits bits
// are all ones, above every key (key_bits leaves room for parts * W *
// 2^(c-1)), so zero digits sort to the end.
inline constexpr unsigned kMaxParts = 4;
// The parts share one set of buckets: a part's keys select its entries, the
// bucket is the key less the part's offset.

// Heads joined by one thread of a join level (msm_accumulate.cuh): few of
// them need an addition, and a long run's heads (the sparse case) should
// not queue up in one thread.
inline constexpr unsigned kHeadSlice = 32;

constexpr std::uint64_t keys_per_part(unsigned c) {
  return std::uint64_t{window_count(c)} * buckets_per_window(c);
}
constexpr unsigned key_bits(unsigned c, unsigned parts = 1) {
  return static_cast<unsigned>(std::bit_width(keys_per_part(c) * parts));
}

// Radix passes of 8 bits (CUB's onesweep digit on sm_90).
constexpr unsigned radix_passes(unsigned bits) {
  return (bits + 7) / 8;
}
constexpr unsigned sort_passes(unsigned c) {
  return radix_passes(key_bits(c));
}

// The entries come window by window, so with one part each window may be
// sorted on its own, on the c bits of
//   window * 2^c + |digit| - 1   (zero digits: kNoKey, all ones),
// which takes fewer passes where W 2^(c-1) needs more bytes than 2^c: at
// c = 22, 3 passes instead of 4 (6 of 24 ms at 2^26). The whole-array keys
// above are dense (windows 2^(c-1) apart); these leave a gap of 2^(c-1)
// after each window so that a zero digit (low c bits all ones) sorts after
// its window's buckets. Either way the bucket of a key k of a part starting
// at key lo is
//   ((k - lo) >> shift) * 2^(c-1) + ((k - lo) mod 2^shift),
// shift = c - 1 (dense) or c (by window).
inline constexpr std::uint32_t kNoKey = 0xffffffffu;
constexpr bool sort_by_window(unsigned c, unsigned parts) {
  return parts == 1 && radix_passes(c) < radix_passes(key_bits(c, parts));
}

constexpr double window_cost(std::size_t n, unsigned c, double addition_cost = 1.0) {
  const double w = window_count(c);
  const double entries = static_cast<double>(n) * w;
  const unsigned passes = sort_by_window(c, 1) ? radix_passes(c) : sort_passes(c);
  return entries * (addition_cost + kSortPassPerEntry * passes) +
         2.0 * kXyzzPerMixed * addition_cost * w * buckets_per_window(c);
}

// Entries summed by one thread of the accumulation: enough threads for
// about `min_threads` (the device's resident capacity times a few waves),
// between 4 and 256 entries each. Runs longer than a slice, and runs a
// slice boundary cuts, are joined in a short tree (see msm_accumulate.cuh),
// so a bucket that holds most of the entries (sparse scalars: mostly 1)
// costs no more than any other. The window sizes the cost model picks give
// about 32 entries per bucket; at 32 entries per thread nearly every run was
// cut and the join level took 10 % of a 2^24 MSM (13.4 of 131 ms).
constexpr unsigned entries_per_thread(std::uint64_t entries, std::uint64_t min_threads) {
  unsigned l = 256;
  while (l > 4 && entries / l < min_threads) l /= 2;
  return l;
}

}  // namespace stoker::kernels::gpu::detail

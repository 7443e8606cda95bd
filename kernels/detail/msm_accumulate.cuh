// Bucket accumulation over the sorted entries, without atomics and with
// every thread doing the same amount of work whatever the buckets' sizes.
//
// The entries, sorted by key, form one run per bucket. Thread t sums the
// fixed slice [t L, t L + L) (L from msm_window.hpp), one mixed addition per
// entry, and hands each run it sees to the run's owner:
// - a run that starts inside the slice is owned by this thread, which
//   writes its sum to the bucket (and its flag) directly;
// - the run the slice starts in, when it began in an earlier slice, is a
//   "head": its partial sum goes to heads[t] with its key, for the run's
//   owner to add later.
// Heads of one run are consecutive in heads[] (a slice inside a run has
// that run's head), so joining them is the same problem on T = N / L items:
// the same kernel over XYZZ heads (join level), whose owners add their sums
// into the bucket, until one slice covers all heads. A bucket of n entries
// thus costs n / L additions per thread on log_L(n) short levels instead of
// n additions in one thread: the sparse scalars' bucket of all the 1s runs
// as fast as random data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/g1.cuh"

namespace stoker::kernels::gpu::detail {

__device__ __forceinline__ G1Affine load_affine(const G1Affine* p) {
  static_assert(sizeof(G1Affine) == 96, "G1Affine is loaded as six 16-byte words");
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  ulonglong2 v[6];
#pragma unroll
  for (int i = 0; i < 6; ++i) v[i] = __ldg(q + i);
  G1Affine out;
  memcpy(&out, v, sizeof out);
  return out;
}

__device__ __forceinline__ G1Xyzz load_xyzz(const G1Xyzz* p) {
  static_assert(sizeof(G1Xyzz) == 192, "G1Xyzz is moved as twelve 16-byte words");
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  ulonglong2 v[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) v[i] = q[i];
  G1Xyzz out;
  memcpy(&out, v, sizeof out);
  return out;
}

__device__ __forceinline__ void store_xyzz(G1Xyzz* p, const G1Xyzz& x) {
  ulonglong2 v[12];
  memcpy(v, &x, sizeof x);
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
#pragma unroll
  for (int i = 0; i < 12; ++i) q[i] = v[i];
}

// Where the sort left the entries (one of two buffers, known on the host
// only once the sort is enqueued), kept in the scratch for the summing
// kernels.
struct SortedEntries {
  const std::uint32_t* keys;
  const std::uint32_t* values;
};

__global__ void publish_sorted_kernel(SortedEntries* out, const std::uint32_t* keys,
                                      const std::uint32_t* values) {
  *out = SortedEntries{keys, values};
}

// Entry j of the sorted entries: the point of its value, negated when the
// sign bit is set. The point at infinity adds nothing.
struct EntrySource {
  const G1Affine* points;
  const SortedEntries* sorted;
  const std::uint32_t* values = nullptr;  // set by the kernel from `sorted`
  __device__ __forceinline__ const std::uint32_t* keys() const { return sorted->keys; }
  __device__ __forceinline__ void bind() { values = sorted->values; }
  __device__ __forceinline__ void add_to(G1Xyzz& acc, std::size_t j) const {
    const std::uint32_t v = values[j];
    G1Affine p = load_affine(points + (v & 0x7fffffffu));
    if (v >> 31) p = neg(p);
    if (!p.is_infinity()) add_mixed(acc, p);
  }
};

// Head j of the previous level.
struct HeadSource {
  const G1Xyzz* heads;
  __device__ __forceinline__ void bind() {}
  __device__ __forceinline__ void add_to(G1Xyzz& acc, std::size_t j) const {
    const G1Xyzz h = load_xyzz(heads + j);
    add(acc, h);
  }
};

struct AccumulateArgs {
  const std::uint32_t* keys;  // sorted (first level: taken from the source)
  std::size_t count;
  // This part's keys: [lo, hi). Others are skipped; bucket = key - lo.
  std::uint32_t lo, hi;
  std::uint32_t none;  // head key meaning "no head"; >= hi
  unsigned slice;      // L
  G1Xyzz* buckets;
  std::uint8_t* filled;      // buckets[b] holds a sum
  std::uint32_t* head_keys;  // out: one per slice, `none` where no head
  G1Xyzz* heads;
};

// kFirst: the entries are points and their keys sorted, zero digits and
// later parts last; else the entries are heads of the previous level
// (sorted but for `none` between runs). An owner stores its run's sum in
// the bucket, or adds it where the bucket holds one already (an earlier
// part's, or the first level's for a run that continues in heads).
template <bool kFirst, typename Source>
__global__ void accumulate_kernel(AccumulateArgs a, Source src) {
  if constexpr (kFirst) {
    a.keys = src.keys();
    src.bind();
  }
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t s = t * a.slice;
  if (s >= a.count) return;
  const std::size_t e = s + a.slice < a.count ? s + a.slice : a.count;
  const std::uint32_t first = a.keys[s];
  const bool continues = first >= a.lo && first < a.hi && s > 0 && a.keys[s - 1] == first;
  if (!continues) a.head_keys[t] = a.none;
  // Sorted keys: a slice wholly past or before this part has nothing for it.
  if (kFirst && (first >= a.hi || a.keys[e - 1] < a.lo)) return;

  auto emit = [&](std::uint32_t key, const G1Xyzz& sum, bool to_head) {
    if (to_head) {
      a.head_keys[t] = key;
      store_xyzz(a.heads + t, sum);
      return;
    }
    const std::uint32_t b = key - a.lo;
    if (kFirst && !a.filled[b]) {
      store_xyzz(a.buckets + b, sum);
      a.filled[b] = 1;
      return;
    }
    G1Xyzz x = load_xyzz(a.buckets + b);
    add(x, sum);
    store_xyzz(a.buckets + b, x);
  };

  bool have = false, to_head = false;
  std::uint32_t cur = 0;
  G1Xyzz acc = G1Xyzz::infinity();
  for (std::size_t j = s; j < e; ++j) {
    const std::uint32_t k = a.keys[j];
    if (kFirst && k >= a.hi) break;
    if (k < a.lo || k >= a.hi) {
      if (have) emit(cur, acc, to_head);
      have = false;
      continue;
    }
    if (!have || k != cur) {
      if (have) emit(cur, acc, to_head);
      have = true;
      cur = k;
      to_head = j == s && continues;
      acc = G1Xyzz::infinity();
    }
    src.add_to(acc, j);
  }
  if (have) emit(cur, acc, to_head);
}

}  // namespace stoker::kernels::gpu::detail

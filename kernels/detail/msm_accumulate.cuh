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
// the same kernel over XYZZ heads (join level, slices of kHeadSlice), whose
// owners add their sums into the bucket, until one slice covers all heads.
// A bucket of n entries thus costs n / L additions per thread on a few
// short levels instead of n additions in one thread: the sparse scalars'
// bucket of all the 1s runs as fast as random data. A join costs a bucket's
// load, an XYZZ addition and a store, so L is long against the runs of
// random scalars (about 32 entries per bucket): a slice boundary then
// splits one run in L / 32 (msm_window.hpp).
//
// Written once over the group (msm_group.hpp): Affine and Xyzz are G1's or
// G2's point types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/detail/accumulate_batch_affine.cuh"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_point_io.cuh"

namespace stoker::kernels::gpu::detail {

// Where the sort left the entries (one of two buffers, known on the host
// only once the sort is enqueued), kept in the scratch for the summing
// kernels (msm_gpu.cu's publish_sorted_kernel writes it).
struct SortedEntries {
  const std::uint32_t* keys;
  const std::uint32_t* values;
};

// Entry j of the sorted entries: the point of its value, negated when the
// sign bit is set. The point at infinity adds nothing.
template <typename Affine>
struct EntrySource {
  using Xyzz = XyzzOf<Affine>;
  const Affine* points;
  const SortedEntries* sorted;
  const std::uint32_t* values = nullptr;  // set by the kernel from `sorted`
  __device__ __forceinline__ const std::uint32_t* keys() const { return sorted->keys; }
  __device__ __forceinline__ void bind() { values = sorted->values; }
  // What the loop reads one entry ahead: the value (point index and sign).
  using Item = std::uint32_t;
  __device__ __forceinline__ Item fetch(std::size_t j) const { return values[j]; }
  __device__ __forceinline__ void add_to(Xyzz& acc, Item v) const {
    Affine p = load_affine(points + (v & 0x7fffffffu));
    if (v >> 31) p = neg(p);
    if (!p.is_infinity()) add_mixed(acc, p);
  }
};

// A head into a join level's sum: an XYZZ head of the previous level, or
// an affine one of accumulate_batch_affine_kernel's lanes.
template <typename Xyzz>
__device__ __forceinline__ void add_head(Xyzz& acc, const Xyzz* head) {
  add(acc, load_xyzz(head));
}
template <typename Xyzz, typename Affine>
__device__ __forceinline__ void add_head(Xyzz& acc, const Affine* head) {
  add_mixed(acc, load_affine_rw(head));
}

// Head j of the previous level (Head: the Xyzz, or an Affine of the lanes).
template <typename XyzzT, typename Head = XyzzT>
struct HeadSource {
  using Xyzz = XyzzT;
  const Head* heads;
  __device__ __forceinline__ const std::uint32_t* keys() const { return nullptr; }
  __device__ __forceinline__ void bind() {}
  using Item = std::size_t;
  __device__ __forceinline__ Item fetch(std::size_t j) const { return j; }
  __device__ __forceinline__ void add_to(Xyzz& acc, Item j) const { add_head(acc, heads + j); }
};

template <typename Xyzz>
struct AccumulateArgs {
  const std::uint32_t* keys;  // sorted (first level: taken from the source)
  std::size_t count;
  // This part's keys: [lo, hi). Others are skipped. Key k is bucket k - lo.
  std::uint32_t lo, hi;
  std::uint32_t none;  // head key meaning "no head"; >= hi
  // Key to bucket (msm_window.hpp): the keys' step between windows and the
  // buckets' (log2 of each).
  unsigned key_shift, bucket_shift;
  // Keys past hi end this part's entries (the whole-array sort: parts in
  // order, zero digits last); false where each window was sorted on its
  // own and zero digits close every window.
  bool past_hi_ends;
  unsigned slice;  // L
  Xyzz* buckets;
  std::uint8_t* filled;      // buckets[b] holds a sum (from this or an earlier part)
  std::uint32_t* head_keys;  // out: one per slice, `none` where no head
  Xyzz* heads;
};

template <typename Xyzz>
__device__ __forceinline__ std::uint32_t bucket_of(const AccumulateArgs<Xyzz>& a,
                                                   std::uint32_t key) {
  const std::uint32_t rel = key - a.lo;
  return ((rel >> a.key_shift) << a.bucket_shift) | (rel & ((1u << a.key_shift) - 1));
}

// A run's sum to its place: a head for the previous slice's owner, or the
// run's bucket. The first level stores (one owner per bucket, whose run
// started from what an earlier part left there, and the kernel then needs
// no registers for an XYZZ addition: 182 instead of 239); the head levels
// add to what the first level stored.
template <bool kFirst, typename Xyzz>
__device__ __forceinline__ void emit(const AccumulateArgs<Xyzz>& a, std::size_t t,
                                     std::uint32_t key, const Xyzz& sum, bool to_head) {
  if (to_head) {
    a.head_keys[t] = key;
    store_xyzz(a.heads + t, sum);
  } else if (kFirst) {
    const std::uint32_t b = bucket_of(a, key);
    store_xyzz(a.buckets + b, sum);
    a.filled[b] = 1;
  } else {
    const std::uint32_t b = bucket_of(a, key);
    Xyzz x = load_xyzz(a.buckets + b);
    add(x, sum);
    store_xyzz(a.buckets + b, x);
  }
}

// kFirst: the entries are points and their keys sorted, zero digits and
// later parts last; else the entries are heads of the previous level
// (sorted but for `none` between runs).
template <bool kFirst, typename Source>
__global__ void accumulate_kernel(AccumulateArgs<typename Source::Xyzz> a, Source source) {
  using Xyzz = typename Source::Xyzz;
  Source src = source;
  src.bind();
  const std::uint32_t* keys = kFirst ? src.keys() : a.keys;
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t s = t * a.slice;
  if (s >= a.count) return;
  const std::size_t e = s + a.slice < a.count ? s + a.slice : a.count;
  const std::uint32_t first = keys[s];
  const bool continues = first >= a.lo && first < a.hi && s > 0 && keys[s - 1] == first;
  if (!continues) a.head_keys[t] = a.none;
  // Sorted keys: a slice wholly past or before this part has nothing for it.
  if (kFirst && a.past_hi_ends && (first >= a.hi || keys[e - 1] < a.lo)) return;

  // One pass over the slice and one position past it, so that a run's sum
  // is handed on at a single place in the code: the compiler then keeps
  // the accumulator in registers (an emit called from three places was a
  // call with the accumulator in local memory, 288 bytes of stack). The
  // next entry's key and value are loaded before this entry's addition, so
  // the point's gather does not wait behind them (2 % at 2^26).
  bool have = false, to_head = false;
  std::uint32_t cur = 0;
  Xyzz acc = Xyzz::infinity();
  std::uint32_t k_next = first;
  typename Source::Item item_next = src.fetch(s);
  for (std::size_t j = s; j <= e; ++j) {
    const std::uint32_t k = j < e ? k_next : a.none;
    const typename Source::Item item = item_next;
    if (j + 1 < e) {
      k_next = keys[j + 1];
      item_next = src.fetch(j + 1);
    }
    const bool in = k >= a.lo && k < a.hi;
    if (have && (!in || k != cur)) {
      emit<kFirst>(a, t, cur, acc, to_head);
      have = false;
    }
    if (!in) {
      if (kFirst && a.past_hi_ends && k >= a.hi) break;
      continue;
    }
    if (!have) {
      have = true;
      cur = k;
      to_head = j == s && continues;
      // A later part's run adds to its bucket: one mixed addition more
      // than starting empty, against an XYZZ addition per bucket and part
      // in the reduction (and a set of buckets per part). The first part
      // (lo 0) skips the flag's load: 2 % of a resident 2^26 MSM.
      acc = kFirst && !to_head && a.lo != 0 && a.filled[bucket_of(a, k)]
                ? load_xyzz(a.buckets + bucket_of(a, k))
                : Xyzz::infinity();
    }
    src.add_to(acc, item);
  }
}

// accumulate_batch_affine's memory on the device: thread t's lanes'
// accumulators and prefixes at [j * threads + t] (a warp's loads coalesce),
// the entries and the key's points through the read-only path, the runs'
// sums to the buckets and heads as accumulate_kernel's first level leaves
// them.
template <typename Affine>
struct LaneDeviceMemory {
  using Xyzz = XyzzOf<Affine>;
  using Field = kernels::detail::FieldOf<Affine>;
  AccumulateArgs<Xyzz> a;  // a copy: a reference to a kernel parameter can put it in local memory
  const std::uint32_t* keys;
  const std::uint32_t* values;
  const Affine* points;
  Affine* accs;
  Field* prefixes;
  std::size_t threads, t;

  __device__ __forceinline__ std::size_t slot(unsigned j) const {
    return std::size_t{j} * threads + t;
  }
  __device__ __forceinline__ std::uint32_t key(std::size_t i) const { return __ldg(keys + i); }
  __device__ __forceinline__ std::uint32_t value(std::size_t i) const {
    return __ldg(values + i);
  }
  __device__ __forceinline__ Affine point(std::uint32_t v) const {
    const Affine p = load_affine(points + (v & 0x7fffffffu));
    return v >> 31 ? neg(p) : p;
  }
  __device__ __forceinline__ Field point_x(std::uint32_t v) const {
    return load_affine_x(points + (v & 0x7fffffffu));
  }
  __device__ __forceinline__ Affine acc(unsigned j) const { return load_affine_rw(accs + slot(j)); }
  __device__ __forceinline__ Field acc_x(unsigned j) const {
    return load_affine_x_rw(accs + slot(j));
  }
  __device__ __forceinline__ void set_acc(unsigned j, const Affine& p) const {
    store_affine(accs + slot(j), p);
  }
  __device__ __forceinline__ Field prefix(unsigned j) const {
    return load_field_rw(prefixes + slot(j));
  }
  __device__ __forceinline__ void set_prefix(unsigned j, const Field& f) const {
    store_field(prefixes + slot(j), f);
  }
  __device__ __forceinline__ void bucket(std::uint32_t key, const Xyzz& sum) const {
    const std::uint32_t b = bucket_of(a, key);
    store_xyzz(a.buckets + b, sum);
    a.filled[b] = 1;
  }
  // The lanes' heads are affine, packed at the affine stride in the array
  // laid out for XYZZ heads (HeadSource<Xyzz, Affine> reads them so).
  __device__ __forceinline__ void head(std::size_t lane, std::uint32_t key,
                                       const Affine& sum) const {
    a.head_keys[lane] = key;
    store_affine(reinterpret_cast<Affine*>(a.heads) + lane, sum);
  }
  __device__ __forceinline__ void no_head(std::size_t lane) const { a.head_keys[lane] = a.none; }
};

// The first level by batched affine additions: `threads` threads of
// `batch` lanes of a.slice entries (one part, lo 0).
template <typename Affine>
__global__ void accumulate_batch_affine_kernel(AccumulateArgs<XyzzOf<Affine>> a,
                                               const Affine* __restrict__ points,
                                               const SortedEntries* sorted, Affine* accs,
                                               kernels::detail::FieldOf<Affine>* prefixes, std::size_t threads,
                                               unsigned batch) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  const LaneDeviceMemory<Affine> mem{a,        sorted->keys, sorted->values, points, accs,
                                     prefixes, threads,      t};
  accumulate_batch_affine<Affine>(mem, a.count, a.slice, batch, t, a.hi);
}

}  // namespace stoker::kernels::gpu::detail

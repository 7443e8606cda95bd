// GPU Pippenger: plan, scratch layout and the launch sequence. The steps
// are described in the headers they live in:
//   detail/msm_window.hpp      window size and the cost model behind it
//   detail/msm_digits.cuh      scalars -> signed digits -> sort entries
//   (CUB radix sort of the entries by bucket)
//   detail/msm_accumulate.cuh  bucket sums, balanced, without atomics
//   detail/msm_reduce.cuh      bucket reduction, window combination
// G1 and G2 run the same steps; detail/msm_group.hpp holds what differs.
// Functions that take points or results are templates over the affine
// type, and the plan's group picks the sizes of everything else.
#include <algorithm>
#include <array>
#include <cub/device/device_radix_sort.cuh>
#include <mutex>

#include "kernels/detail/msm_digits.cuh"
#include "kernels/detail/msm_gpu_steps.cuh"

namespace stoker::kernels::gpu {
namespace detail::pippenger {

__global__ void publish_sorted_kernel(SortedEntries* out, const std::uint32_t* keys,
                                      const std::uint32_t* values) {
  *out = SortedEntries{keys, values};
}

constexpr std::size_t kAlign = 256;
constexpr std::size_t align_up(std::size_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

struct DeviceFacts {
  cudaError_t error = cudaSuccess;
  int sms = 0;
  int threads_per_sm = 0;
  std::size_t memory = 0;
};

// Queried once per device and process.
const DeviceFacts& device_facts(int device) {
  constexpr int kMaxDevices = 64;
  static std::array<DeviceFacts, kMaxDevices> facts;
  static std::array<std::once_flag, kMaxDevices> once;
  static DeviceFacts bad{cudaErrorInvalidDevice};
  if (device < 0 || device >= kMaxDevices) return bad;
  std::call_once(once[device], [device] {
    DeviceFacts& f = facts[device];
    cudaDeviceProp p{};
    f.error = cudaGetDeviceProperties(&p, device);
    if (f.error) return;
    f.sms = p.multiProcessorCount;
    f.threads_per_sm = p.maxThreadsPerMultiProcessor;
    f.memory = p.totalGlobalMem;
  });
  return facts[device];
}

// The accumulation's threads to aim for (msm_window.hpp's
// entries_per_thread): the device's resident capacity, twice.
std::uint64_t accumulate_threads(const DeviceFacts& f) {
  return std::uint64_t(f.sms) * f.threads_per_sm * 2;
}

// The most scratch a plan takes: half the device, the other half left to
// the points, scalars and everyone else.
std::uint64_t scratch_limit(const DeviceFacts& f) {
  return f.memory / 2;
}

ReduceLevels reduce_levels(std::uint32_t buckets, unsigned first_log) {
  ReduceLevels l;
  std::size_t m = buckets;
  while (m > 1) {
    const unsigned log = l.count == 0 ? first_log : detail::kReduceGroupLog;
    const unsigned g = static_cast<unsigned>(std::min<std::size_t>(m, std::size_t{1} << log));
    m /= g;
    l.group[l.count] = g;
    l.out_per_window[l.count] = m;
    ++l.count;
  }
  return l;
}

Layout layout(const MsmPlan& p) {
  Layout l{};
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += align_up(bytes);
    return here;
  };
  const std::size_t words = p.entries * sizeof(std::uint32_t);
  for (int i = 0; i < 2; ++i) l.keys[i] = take(words);
  for (int i = 0; i < 2; ++i) l.values[i] = take(words);
  l.sort_temp = take(p.sort_temp_bytes);
  l.sorted = take(sizeof(detail::SortedEntries));
  const std::size_t xyzz = detail::xyzz_bytes(p.group);
  const std::size_t buckets = std::size_t{p.windows} * p.buckets;
  l.buckets = take(buckets * xyzz);
  l.filled = take(buckets);
  const std::size_t t1 = (p.entries + p.slice - 1) / p.slice;
  const std::size_t t2 = (t1 + detail::kHeadSlice - 1) / detail::kHeadSlice;
  const std::size_t heads[2] = {t1, t2};
  for (int i = 0; i < 2; ++i) {
    l.head_keys[i] = take(heads[i] * sizeof(std::uint32_t));
    l.heads[i] = take(heads[i] * xyzz);
  }
  l.lane_accs = l.lane_prefixes = at;
  if (p.accumulate_batch) {
    const std::size_t slots = (t1 + p.accumulate_batch - 1) / p.accumulate_batch *
                              std::size_t{p.accumulate_batch};
    const std::size_t affine = detail::affine_bytes(p.group);
    l.lane_accs = take(slots * affine);
    l.lane_prefixes = take(slots * affine / 2);  // one coordinate
  }
  const ReduceLevels r = reduce_levels(p.buckets, p.reduce_first_log);
  const std::size_t items[2] = {r.count > 0 ? r.out_per_window[0] : 1,
                                r.count > 1 ? r.out_per_window[1] : 1};
  for (int i = 0; i < 2; ++i) {
    l.reduce_y[i] = take(p.windows * items[i] * xyzz);
    l.reduce_s[i] = take(p.windows * items[i] * xyzz);
  }
  l.total = at;
  return l;
}

// Scratch without the sort's temporary storage, for choosing a window
// size that fits the device.
std::size_t scratch_estimate(MsmGroup group, std::size_t n, unsigned c, unsigned slice,
                             unsigned parts) {
  MsmPlan p;
  p.group = group;
  p.n = n;
  p.parts = parts;
  p.window_bits = c;
  p.windows = detail::window_count(c);
  p.buckets = detail::buckets_per_window(c);
  p.entries = n * p.windows;
  p.slice = slice;
  return layout(p).total;
}

// One sort's keys: the whole array, or one window's.
struct SortShape {
  std::size_t items;
  unsigned bits;
};
SortShape sort_shape(const MsmPlan& p) {
  if (p.window_sorts) return {p.n, p.window_bits};
  return {p.entries, detail::key_bits(p.window_bits, p.parts)};
}

std::error_code sort_temp_bytes(const MsmPlan& p, std::size_t& bytes) {
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr), values(nullptr, nullptr);
  const SortShape shape = sort_shape(p);
  bytes = 0;
  return make_cuda_error(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values,
                                                         static_cast<int>(shape.items), 0,
                                                         static_cast<int>(shape.bits)));
}

unsigned key_shift(const MsmPlan& p) {
  return p.window_sorts ? p.window_bits : p.window_bits - 1;
}

}  // namespace detail::pippenger

using namespace detail::pippenger;

std::error_code plan_msm(MsmGroup group, std::size_t n, int device, MsmPlan& plan,
                         unsigned window_bits, unsigned parts) {
  const DeviceFacts& f = device_facts(device);
  if (f.error) return make_cuda_error(f.error);
  if (parts < 1 || parts > detail::kMaxParts || !detail::known_group(group))
    return make_error_code(Errc::invalid_argument);
  if (n == 0) {
    plan = MsmPlan{};
    plan.group = group;
    plan.parts = parts;
    return {};
  }
  static_assert(MsmPlan::kMaxParts == detail::kMaxParts);
  if (window_bits != 0 &&
      (window_bits < detail::kMinWindowBits || window_bits > detail::kMaxWindowBits))
    return make_error_code(Errc::invalid_argument);
  const std::uint64_t min_threads = accumulate_threads(f);
  unsigned best = 0;
  double best_cost = 0;
  for (unsigned c = detail::kMinWindowBits; c <= detail::kMaxWindowBits; ++c) {
    if (window_bits && c != window_bits) continue;
    const std::uint64_t entries = std::uint64_t{n} * detail::window_count(c);
    if (entries > detail::kMaxEntries) continue;
    const unsigned slice = detail::entries_per_thread(entries, min_threads);
    if (!window_bits && scratch_estimate(group, n, c, slice, parts) > scratch_limit(f)) continue;
    const double cost = detail::window_cost(n, c, detail::addition_cost(group));
    if (!best || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  if (!best) return make_error_code(Errc::invalid_argument);
  MsmPlan p;
  p.group = group;
  p.n = n;
  p.window_bits = best;
  p.windows = detail::window_count(best);
  p.buckets = detail::buckets_per_window(best);
  p.entries = n * p.windows;
  p.slice = detail::entries_per_thread(p.entries, min_threads);
  p.parts = parts;
  p.window_sorts = detail::sort_by_window(best, parts);
  // Shares of 1, 2, 2, ...: the first part's copy hides under the sort.
  const std::size_t shares = 2 * std::size_t{parts} - 1;
  for (unsigned k = 0; k <= parts; ++k)
    p.part_begin[k] = k == 0 ? 0 : n * (2 * std::size_t{k} - 1) / shares;
  if (auto ec = sort_temp_bytes(p, p.sort_temp_bytes)) return ec;
  p.scratch_bytes = layout(p).total;
  plan = p;
  return {};
}

namespace {
// A refined plan `p` replaces `plan` with the scratch its layout takes, or
// is refused (plan left as it was) where that scratch passes plan_msm's
// limit.
std::error_code take_refined_plan(MsmPlan& plan, MsmPlan p, const DeviceFacts& f) {
  p.scratch_bytes = layout(p).total;
  if (p.scratch_bytes > scratch_limit(f)) return make_error_code(Errc::invalid_argument);
  plan = p;
  return {};
}
}  // namespace

std::error_code plan_batch_affine_buckets(MsmPlan& plan, int device, unsigned batch,
                                          unsigned threads_per_sm) {
  const DeviceFacts& f = device_facts(device);
  if (f.error) return make_cuda_error(f.error);
  if (plan.parts != 1 || !detail::known_group(plan.group) || batch > 4096 ||
      threads_per_sm > 2048)
    return make_error_code(Errc::invalid_argument);
  if (plan.n == 0) return {};
  // As many threads as the kernel keeps resident (near 255 registers in
  // G2: 8 warps an SM), each lane as long as that takes.
  const std::size_t threads =
      std::size_t(f.sms) * (threads_per_sm ? threads_per_sm : kAccumulateBatchThreadsPerSm);
  auto take_batch = [&](unsigned b) {
    MsmPlan p = plan;
    p.accumulate_batch = b;
    const std::size_t lanes = threads * b;
    p.slice = static_cast<unsigned>(std::max<std::size_t>(1, (p.entries + lanes - 1) / lanes));
    return take_refined_plan(plan, p, f);
  };
  if (batch) return take_batch(batch);
  // By default the lanes a thread whose rounding leaves it least work; where
  // their scratch (up to 1.25x 128 lanes') passes the limit, 128's may not.
  const unsigned least_work = detail::accumulate_batch(
      plan.entries, threads, kAccumulateBatchLeastSlice, detail::affine_steps(plan.group));
  if (least_work && !take_batch(least_work)) return {};
  return take_batch(kAccumulateBatch);
}

std::error_code plan_reduce_fold(MsmPlan& plan, int device, unsigned first_log) {
  const DeviceFacts& f = device_facts(device);
  if (f.error) return make_cuda_error(f.error);
  if (first_log < 1 || first_log > detail::kReduceFirstGroupLog || !detail::known_group(plan.group))
    return make_error_code(Errc::invalid_argument);
  if (plan.n == 0) return {};
  MsmPlan p = plan;
  p.reduce_first_log = first_log;
  return take_refined_plan(plan, p, f);
}

std::size_t msm_scratch_bytes(MsmGroup group, std::size_t n, int device) {
  MsmPlan p;
  if (plan_msm(group, n, device, p)) return 0;
  return p.scratch_bytes;
}

std::error_code detail::pippenger::check_call(const MsmPlan& p, MsmGroup group, void* d_scratch,
                                              std::size_t scratch_bytes, Scratch& s) {
  if (p.group != group || !detail::known_group(p.group))
    return make_error_code(Errc::invalid_argument);
  if (p.n == 0) return {};
  if (!d_scratch || reinterpret_cast<std::uintptr_t>(d_scratch) % kAlign ||
      p.n > detail::kMaxEntries || p.entries != p.n * std::size_t{p.windows} ||
      p.buckets != detail::buckets_per_window(p.window_bits) || p.slice == 0 || p.parts < 1 ||
      p.parts > detail::kMaxParts || p.part_begin[0] != 0 || p.part_begin[p.parts] != p.n ||
      (p.window_sorts && p.parts != 1) || (p.accumulate_batch && p.parts != 1) ||
      p.reduce_first_log < 1 || p.reduce_first_log > detail::kReduceFirstGroupLog)
    return make_error_code(Errc::invalid_argument);
  for (unsigned k = 0; k < p.parts; ++k)
    if (p.part_begin[k] > p.part_begin[k + 1]) return make_error_code(Errc::invalid_argument);
  s.base = static_cast<unsigned char*>(d_scratch);
  s.l = layout(p);
  if (scratch_bytes < s.l.total) return make_error_code(Errc::invalid_argument);
  return {};
}

std::error_code detail::pippenger::sort_scalars(const MsmPlan& p, const Fr* d_scalars,
                                                const std::uint32_t* d_point_index, void* d_scratch,
                                                std::size_t scratch_bytes, cudaStream_t stream) {
  Scratch s{};
  if (auto ec = check_call(p, p.group, d_scratch, scratch_bytes, s)) return ec;
  if (p.n == 0) return {};
  if (!d_scalars || reinterpret_cast<std::uintptr_t>(d_scalars) % 16 ||
      (d_point_index && p.parts != 1))
    return make_error_code(Errc::invalid_argument);
  const Layout& l = s.l;
  auto* keys0 = s.at<std::uint32_t>(l.keys[0]);
  auto* vals0 = s.at<std::uint32_t>(l.values[0]);
  detail::PartBounds bounds{p.parts, {}, key_shift(p)};
  for (unsigned k = 0; k <= p.parts; ++k) bounds.begin[k] = p.part_begin[k];
  if (auto ec =
          launch<detail::scalar_digits_kernel>(p.n, stream, d_scalars, d_point_index, p.n,
                                               p.window_bits, p.windows, bounds, keys0, vals0))
    return ec;
  return sort_entries(p, s, stream);
}

std::error_code detail::pippenger::sort_entries(const MsmPlan& p, const Scratch& s,
                                                cudaStream_t stream) {
  const Layout& l = s.l;
  auto* keys0 = s.at<std::uint32_t>(l.keys[0]);
  auto* vals0 = s.at<std::uint32_t>(l.values[0]);
  auto* keys1 = s.at<std::uint32_t>(l.keys[1]);
  auto* vals1 = s.at<std::uint32_t>(l.values[1]);
  // The whole array at once, or window by window (the same number of
  // passes for each, so every window ends in the same buffer).
  const SortShape shape = sort_shape(p);
  const std::size_t sorts = p.entries / shape.items;
  int selector = -1;
  for (std::size_t w = 0; w < sorts; ++w) {
    const std::size_t at = w * shape.items;
    cub::DoubleBuffer<std::uint32_t> keys(keys0 + at, keys1 + at), values(vals0 + at, vals1 + at);
    std::size_t temp_bytes = p.sort_temp_bytes;
    if (auto ec = make_cuda_error(cub::DeviceRadixSort::SortPairs(
            s.at<void>(l.sort_temp), temp_bytes, keys, values, static_cast<int>(shape.items), 0,
            static_cast<int>(shape.bits), stream)))
      return ec;
    if (keys.selector != values.selector || (selector >= 0 && keys.selector != selector))
      return make_error_code(Errc::invalid_argument);
    selector = keys.selector;
  }
  const std::uint32_t* sorted_keys = selector ? keys1 : keys0;
  const std::uint32_t* sorted_values = selector ? vals1 : vals0;
  const std::size_t total_buckets = std::size_t{p.windows} * p.buckets;
  if (auto ec =
          make_cuda_error(cudaMemsetAsync(s.at<std::uint8_t>(l.filled), 0, total_buckets, stream)))
    return ec;
  // Which of the two buffers holds the sorted entries is known here, on
  // the host, once the sort is enqueued; the summing kernels read it from
  // the scratch, so msm_add_points needs no state from this call.
  return launch<publish_sorted_kernel>(1, stream, s.at<detail::SortedEntries>(l.sorted),
                                       sorted_keys, sorted_values);
}

std::error_code detail::pippenger::plan_bucket_sums(MsmGroup group, std::size_t n,
                                                    unsigned bucket_bits, unsigned windows,
                                                    unsigned slice, MsmPlan& plan) {
  if (!detail::known_group(group) || n == 0 || bucket_bits < 1 ||
      bucket_bits + 1 > detail::kMaxWindowBits || windows == 0 ||
      std::uint64_t{n} * windows > detail::kMaxEntries || slice == 0 ||
      (std::uint64_t{windows} << (bucket_bits + 1)) > detail::kNoKey)
    return make_error_code(Errc::invalid_argument);
  MsmPlan p;
  p.group = group;
  p.n = n;
  p.window_bits = bucket_bits + 1;
  p.windows = windows;
  p.buckets = detail::buckets_per_window(p.window_bits);
  p.entries = n * windows;
  p.window_sorts = true;
  p.slice = slice;
  p.parts = 1;
  p.part_begin[0] = 0;
  p.part_begin[1] = n;
  if (auto ec = sort_temp_bytes(p, p.sort_temp_bytes)) return ec;
  p.scratch_bytes = layout(p).total;
  plan = p;
  return {};
}

unsigned detail::pippenger::accumulate_slice(std::size_t entries, int device) {
  const DeviceFacts& f = device_facts(device);
  if (f.error) return 0;
  return detail::entries_per_thread(entries, accumulate_threads(f));
}

std::error_code msm_sort_scalars(const MsmPlan& p, const Fr* d_scalars, void* d_scratch,
                                 std::size_t scratch_bytes, cudaStream_t stream) {
  return sort_scalars(p, d_scalars, nullptr, d_scratch, scratch_bytes, stream);
}

std::error_code plan_sparse_msm(MsmGroup group, std::size_t ones, std::size_t rest, int device,
                                SparseMsmPlan& plan, const SparseMsmShape& shape) {
  OnesSum ones_sum = shape.ones_sum;
  if (!detail::known_group(group) || ones > detail::kMaxEntries ||
      (ones_sum != OnesSum::automatic && ones_sum != OnesSum::mixed_additions &&
       ones_sum != OnesSum::batch_affine) ||
      shape.ones_batch > 4096 || shape.ones_threads_per_sm > 2048 ||
      shape.rest_reduce_first_log > detail::kReduceFirstGroupLog ||
      (shape.ones_start != OnesStart::with_the_rest &&
       shape.ones_start != OnesStart::after_the_buckets) ||
      (shape.rest_buckets != BucketSum::automatic &&
       shape.rest_buckets != BucketSum::mixed_additions &&
       shape.rest_buckets != BucketSum::batch_affine))
    return make_error_code(Errc::invalid_argument);
  const DeviceFacts& f = device_facts(device);
  if (f.error) return make_cuda_error(f.error);
  SparseMsmPlan p;
  p.group = group;
  p.ones = ones;
  if (auto ec = plan_msm(group, rest, device, p.rest, shape.rest_window_bits)) return ec;
  if (shape.rest_buckets == BucketSum::batch_affine) {
    if (auto ec = plan_batch_affine_buckets(p.rest, device, shape.rest_bucket_batch,
                                            shape.rest_bucket_threads_per_sm))
      return ec;
  } else if (shape.rest_buckets == BucketSum::automatic && group == MsmGroup::g2) {
    // Where lanes are long enough; mixed where the scratch would not fit.
    MsmPlan affine = p.rest;
    if (!plan_batch_affine_buckets(affine, device, shape.rest_bucket_batch,
                                   shape.rest_bucket_threads_per_sm) &&
        affine.slice >= kAccumulateBatchLeastSlice)
      p.rest = affine;
  }
  if (shape.rest_reduce_first_log) {
    if (auto ec = plan_reduce_fold(p.rest, device, shape.rest_reduce_first_log)) return ec;
  } else if (group == MsmGroup::g2) {
    // As the affine buckets: 2^6 where the smaller fold's scratch would not fit.
    const unsigned fold =
        detail::reduce_first_log(std::uint64_t{p.rest.windows} * p.rest.buckets,
                                 std::uint64_t(f.sms) * f.threads_per_sm);
    if (fold != p.rest.reduce_first_log) (void)plan_reduce_fold(p.rest, device, fold);
  }
  std::size_t at = align_up(p.rest.scratch_bytes);
  // Batched affine additions: threads as many as the kernel keeps resident
  // (its G2 form sits near 255 registers: 8 warps an SM), each with at
  // least kOnesBatchRounds batches where the ones allow.
  const unsigned batch = shape.ones_batch ? shape.ones_batch : kOnesBatch;
  const std::size_t batch_threads =
      std::size_t(f.sms) *
      (shape.ones_threads_per_sm ? shape.ones_threads_per_sm : kOnesBatchThreadsPerSm);
  const std::size_t per_round = std::size_t{batch} * kOnesBatchRounds;
  if (ones_sum == OnesSum::automatic)
    ones_sum = group == MsmGroup::g2 && ones >= batch_threads * per_round
                   ? OnesSum::batch_affine
                   : OnesSum::mixed_additions;
  p.ones_sum = ones_sum;
  p.ones_start = shape.ones_start;
  if (ones && ones_sum == OnesSum::batch_affine) {
    p.ones_batch = batch;
    p.ones_threads = std::clamp<std::size_t>(ones / per_round, 1, batch_threads);
    const std::size_t slots = p.ones_threads * p.ones_batch;
    p.ones_accumulators_at = at;
    at += align_up(slots * detail::affine_bytes(group));
    p.ones_prefixes_at = at;
    at += align_up(slots * detail::affine_bytes(group) / 2);  // one coordinate
  } else if (ones) {
    // Every thread the SMs hold, or one per point where there are fewer.
    const std::size_t most = std::size_t(f.sms) * f.threads_per_sm;
    p.ones_slice = (ones + most - 1) / most;
    p.ones_threads = (ones + p.ones_slice - 1) / p.ones_slice;
  }
  if (ones) {
    const std::size_t xyzz = detail::xyzz_bytes(group);
    p.partials_at[0] = at;
    at += align_up(p.ones_threads * xyzz);
    p.partials_at[1] = at;
    at += align_up((p.ones_threads + detail::kOnesGroup - 1) / detail::kOnesGroup * xyzz);
  }
  p.scratch_bytes = std::max<std::size_t>(at, kAlign);
  plan = p;
  return {};
}

std::error_code msm_add_points(const MsmPlan& p, unsigned part, const G1Affine* d_points,
                               void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  return add_points(p, part, d_points, d_scratch, scratch_bytes, stream);
}

std::error_code msm_finish(const MsmPlan& p, G1Xyzz* d_result, void* d_scratch,
                           std::size_t scratch_bytes, cudaStream_t stream) {
  return finish(p, MsmGroup::g1, d_result, d_scratch, scratch_bytes, stream);
}

std::error_code msm_finish_window_sums(const MsmPlan& p, MsmGroup group, void* d_sums,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream) {
  if (group == MsmGroup::g2)
    return msm_finish_window_sums_g2(p, d_sums, d_scratch, scratch_bytes, stream);
  return finish_window_sums<G1Xyzz>(p, MsmGroup::g1, d_sums, nullptr, d_scratch, scratch_bytes,
                                    stream);
}

std::error_code msm(const MsmPlan& p, G1Xyzz* d_result, const G1Affine* d_points,
                    const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                    cudaStream_t stream) {
  return run_msm(p, d_result, d_points, d_scalars, d_scratch, scratch_bytes, stream);
}

std::error_code msm(G1Xyzz* d_result, const G1Affine* d_points, const Fr* d_scalars, std::size_t n,
                    void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  return run_msm(d_result, d_points, d_scalars, n, d_scratch, scratch_bytes, stream);
}

std::error_code sparse_msm(const SparseMsmPlan& p, G1Xyzz* d_result, const G1Affine* d_points,
                           const std::uint32_t* d_ones, const std::uint32_t* d_rest,
                           const Fr* d_rest_scalars, void* d_scratch, std::size_t scratch_bytes,
                           cudaStream_t stream) {
  return run_sparse_msm(p, d_result, nullptr, d_points, d_ones, d_rest, d_rest_scalars, d_scratch,
                        scratch_bytes, stream);
}

std::error_code sparse_msm_window_sums(const SparseMsmPlan& p, void* d_sums,
                                       const G1Affine* d_points, const std::uint32_t* d_ones,
                                       const std::uint32_t* d_rest, const Fr* d_rest_scalars,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream) {
  return run_sparse_msm<G1Affine>(p, nullptr, d_sums, d_points, d_ones, d_rest, d_rest_scalars,
                                  d_scratch, scratch_bytes, stream);
}

std::error_code msm_window_sums(const MsmPlan& p, void* d_sums, const G1Affine* d_points,
                                const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                                cudaStream_t stream) {
  return run_msm_window_sums(p, d_sums, d_points, d_scalars, d_scratch, scratch_bytes, stream);
}

}  // namespace stoker::kernels::gpu

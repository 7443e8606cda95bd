// The GPU Pippenger's steps that take points or sums, as templates over
// the group (detail/msm_group.hpp), with what they share with the plan and
// the sort: the scratch layout, the call checks, the launches.
// kernels/msm_gpu.cu holds the plan, the sort and G1's entry points;
// kernels/msm_g2_gpu.cu G2's, in a translation unit of their own so that
// the two groups' kernels compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <system_error>

#include "common/error.hpp"
#include "kernels/detail/forked_streams.hpp"
#include "kernels/detail/msm_accumulate.cuh"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_ones.cuh"
#include "kernels/detail/msm_reduce.cuh"
#include "kernels/detail/msm_window.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu::detail::pippenger {

using detail::AccumulateArgs;
using detail::ReduceArgs;
using detail::XyzzOf;

// Block size from the occupancy calculator, once per kernel (the engine's
// GPUs are of one kind).
struct Geometry {
  cudaError_t error = cudaSuccess;
  int threads = 0;
};
template <auto Kernel>
const Geometry& geometry() {
  static const Geometry g = [] {
    Geometry r;
    int min_grid = 0;
    r.error = cudaOccupancyMaxPotentialBlockSize(&min_grid, &r.threads, Kernel);
    return r;
  }();
  return g;
}

template <auto Kernel, typename... Args>
std::error_code launch(std::size_t threads, cudaStream_t stream, Args... args) {
  const Geometry& g = geometry<Kernel>();
  if (g.error) return make_cuda_error(g.error);
  const std::size_t per = static_cast<std::size_t>(g.threads);
  const std::size_t blocks = std::max<std::size_t>(1, (threads + per - 1) / per);
  if (blocks > 0x7fffffffu) return make_error_code(Errc::invalid_argument);
  Kernel<<<static_cast<unsigned>(blocks), g.threads, 0, stream>>>(args...);
  return make_cuda_error(cudaGetLastError());
}

// G2's msm_finish_window_sums, in msm_g2_gpu.cu with G2's other kernels.
std::error_code msm_finish_window_sums_g2(const MsmPlan& p, void* d_sums, void* d_scratch,
                                          std::size_t scratch_bytes, cudaStream_t stream);

// The reduction's levels: group sizes until one item per window is left.
struct ReduceLevels {
  unsigned count = 0;
  unsigned group[32] = {};
  std::size_t out_per_window[32] = {};
};
ReduceLevels reduce_levels(std::uint32_t buckets, unsigned first_log);

// Byte offsets of every scratch array from the plan.
struct Layout {
  std::size_t keys[2], values[2], sort_temp, sorted;
  std::size_t buckets, filled;
  std::size_t head_keys[2], heads[2];
  std::size_t lane_accs, lane_prefixes;  // accumulate_batch: threads * batch each
  std::size_t reduce_y[2], reduce_s[2];
  std::size_t total;
};
Layout layout(const MsmPlan& p);

struct Scratch {
  unsigned char* base;
  Layout l;
  template <typename T>
  T* at(std::size_t off) const {
    return reinterpret_cast<T*>(base + off);
  }
};

// `group`: the group of the call's points or result, which the plan's must
// be (its sizes lay out the scratch); the sort's call has neither.
std::error_code check_call(const MsmPlan& p, MsmGroup group, void* d_scratch,
                           std::size_t scratch_bytes, Scratch& s);

// The keys' step from one window to the next, log2 (msm_window.hpp).
unsigned key_shift(const MsmPlan& p);

// msm_sort_scalars, with each scalar's point taken from d_point_index
// (null: scalar i is point i).
std::error_code sort_scalars(const MsmPlan& p, const Fr* d_scalars,
                             const std::uint32_t* d_point_index, void* d_scratch,
                             std::size_t scratch_bytes, cudaStream_t stream);

// The sort of the entries that a digits kernel left in keys[0] and
// values[0] (s from check_call), the buckets marked empty, and where the
// sorted entries lie published for the summing kernels.
std::error_code sort_entries(const MsmPlan& p, const Scratch& s, cudaStream_t stream);

// A plan for bucket sums that are not an MSM's: n points, `windows`
// windows of 2^bucket_bits buckets each, each window's entries sorted on
// their own (keys window << (bucket_bits + 1) | bucket, or kNoKey), one
// part, `slice` entries a thread. add_points then leaves the sums in the
// scratch's `buckets` with `filled` marking those that got a point.
std::error_code plan_bucket_sums(MsmGroup group, std::size_t n, unsigned bucket_bits,
                                 unsigned windows, unsigned slice, MsmPlan& plan);
// plan_msm's entries a thread for `entries` on `device` (0: the device
// could not be queried).
unsigned accumulate_slice(std::size_t entries, int device);

template <typename Affine>
std::error_code add_points(const MsmPlan& p, unsigned part, const Affine* d_points, void* d_scratch,
                           std::size_t scratch_bytes, cudaStream_t stream) {
  using Xyzz = XyzzOf<Affine>;
  Scratch s{};
  if (auto ec = check_call(p, detail::MsmGroupTraits<Affine>::kGroup, d_scratch, scratch_bytes, s))
    return ec;
  if (p.n == 0) return {};
  if (part >= p.parts || !d_points || reinterpret_cast<std::uintptr_t>(d_points) % 16)
    return make_error_code(Errc::invalid_argument);
  const Layout& l = s.l;
  auto at = [&s](std::size_t off) { return s.base + off; };
  const std::uint32_t per_part = p.windows << key_shift(p);

  // The entries, then the heads level by level.
  AccumulateArgs<Xyzz> a{};
  a.keys = nullptr;  // the first level reads them from `sorted`
  a.count = p.entries;
  a.lo = part * per_part;
  a.hi = a.lo + per_part;
  a.none = detail::kNoKey;
  a.key_shift = key_shift(p);
  a.bucket_shift = p.window_bits - 1;
  a.past_hi_ends = !p.window_sorts;
  a.slice = p.slice;
  a.buckets = s.at<Xyzz>(l.buckets);
  a.filled = s.at<std::uint8_t>(l.filled);
  a.head_keys = s.at<std::uint32_t>(l.head_keys[0]);
  a.heads = s.at<Xyzz>(l.heads[0]);
  std::size_t slices = (p.entries + p.slice - 1) / p.slice;
  if (p.accumulate_batch) {
    const std::size_t threads = (slices + p.accumulate_batch - 1) / p.accumulate_batch;
    if (auto ec = launch<detail::accumulate_batch_affine_kernel<Affine>>(
            threads, stream, a, d_points, s.at<const detail::SortedEntries>(l.sorted),
            s.at<Affine>(l.lane_accs), s.at<detail::FieldOf<Affine>>(l.lane_prefixes), threads,
            p.accumulate_batch))
      return ec;
  } else if (auto ec = launch<detail::accumulate_kernel<true, detail::EntrySource<Affine>>>(
                 slices, stream, a,
                 detail::EntrySource<Affine>{d_points,
                                             s.at<const detail::SortedEntries>(l.sorted)})) {
    return ec;
  }
  int side = 0;
  for (bool first_join = true; slices > 1; first_join = false) {
    AccumulateArgs<Xyzz> h = a;
    h.keys = reinterpret_cast<const std::uint32_t*>(at(l.head_keys[side]));
    h.count = slices;
    h.slice = detail::kHeadSlice;
    h.head_keys = reinterpret_cast<std::uint32_t*>(at(l.head_keys[1 - side]));
    h.heads = reinterpret_cast<Xyzz*>(at(l.heads[1 - side]));
    slices = (slices + detail::kHeadSlice - 1) / detail::kHeadSlice;
    // The lanes of the affine form leave affine heads (msm_accumulate.cuh).
    if (p.accumulate_batch && first_join) {
      using Source = detail::HeadSource<Xyzz, Affine>;
      const Source src{reinterpret_cast<const Affine*>(at(l.heads[0]))};
      if (auto ec = launch<detail::accumulate_kernel<false, Source>>(slices, stream, h, src))
        return ec;
    } else {
      const detail::HeadSource<Xyzz> src{reinterpret_cast<const Xyzz*>(at(l.heads[side]))};
      if (auto ec = launch<detail::accumulate_kernel<false, detail::HeadSource<Xyzz>>>(
              slices, stream, h, src))
        return ec;
    }
    side = 1 - side;
  }
  return {};
}

// The bucket reduction, level by level into alternating buffers; *y and
// *s end as the windows' Y and S (msm_reduce.cuh). p.n > 0.
template <typename Xyzz>
std::error_code reduce(const MsmPlan& p, const Scratch& s, const Xyzz*& y, const Xyzz*& sums,
                       cudaStream_t stream) {
  const Layout& l = s.l;
  auto at = [&s](std::size_t off) { return s.base + off; };
  auto* buckets = s.at<Xyzz>(l.buckets);
  auto* filled = s.at<std::uint8_t>(l.filled);
  const ReduceLevels r = reduce_levels(p.buckets, p.reduce_first_log);
  std::size_t in_per_window = p.buckets;
  unsigned scale_log = 0;
  const Xyzz *y_in = nullptr, *s_in = nullptr;
  for (unsigned i = 0; i < r.count; ++i) {
    ReduceArgs<Xyzz> ra{};
    ra.windows = p.windows;
    ra.in_per_window = in_per_window;
    ra.group = r.group[i];
    ra.scale_log = scale_log;
    ra.buckets = buckets;
    ra.filled = filled;
    ra.y_in = y_in;
    ra.s_in = s_in;
    ra.y_out = reinterpret_cast<Xyzz*>(at(l.reduce_y[i % 2]));
    ra.s_out = reinterpret_cast<Xyzz*>(at(l.reduce_s[i % 2]));
    const std::size_t items = r.out_per_window[i] * p.windows;
    const std::error_code ec =
        i == 0 ? launch<detail::reduce_level_kernel<true, Xyzz>>(items, stream, ra)
               : launch<detail::reduce_level_kernel<false, Xyzz>>(items, stream, ra);
    if (ec) return ec;
    y_in = ra.y_out;
    s_in = ra.s_out;
    in_per_window = r.out_per_window[i];
    scale_log += static_cast<unsigned>(std::countr_zero(r.group[i]));
  }
  y = y_in;
  sums = s_in;
  return {};
}

// The windows' Y and S combined into *d_result on the GPU (p.n > 0).
template <typename Xyzz>
std::error_code combine_windows(const MsmPlan& p, Xyzz* d_result, const Xyzz* y, const Xyzz* sums,
                                cudaStream_t stream) {
  return launch<detail::combine_windows_kernel<Xyzz>>(1, stream, d_result, y, sums, p.windows,
                                                      p.window_bits);
}

// The windows' Y and S (null where p.n is 0) and `extra` (null: infinity)
// left in d_sums for the host (msm.hpp, msm_window_sums).
template <typename Xyzz>
std::error_code write_window_sums(const MsmPlan& p, MsmGroup group, void* d_sums, const Xyzz* y,
                                  const Xyzz* sums, const Xyzz* extra, cudaStream_t stream) {
  auto* out = static_cast<unsigned char*>(d_sums);
  const auto g = static_cast<std::uint32_t>(group);
  if (p.n == 0)
    return launch<detail::write_window_sums_kernel<Xyzz>>(1, stream, out, nullptr, nullptr, 0u, 0u,
                                                          g, extra);
  return launch<detail::write_window_sums_kernel<Xyzz>>(p.windows + 1, stream, out, y, sums,
                                                        p.windows, p.window_bits, g, extra);
}

template <typename Xyzz>
std::error_code finish(const MsmPlan& p, MsmGroup group, Xyzz* d_result, void* d_scratch,
                       std::size_t scratch_bytes, cudaStream_t stream) {
  if (!d_result) return make_error_code(Errc::invalid_argument);
  Scratch s{};
  if (auto ec = check_call(p, group, d_scratch, scratch_bytes, s)) return ec;
  if (p.n == 0) return launch<detail::write_infinity_kernel<Xyzz>>(1, stream, d_result);
  const Xyzz *y = nullptr, *sums = nullptr;
  if (auto ec = reduce(p, s, y, sums, stream)) return ec;
  return combine_windows(p, d_result, y, sums, stream);
}

// The same, leaving the window sums and `extra` (null: infinity) in d_sums
// for the host (msm.hpp, msm_window_sums).
template <typename Xyzz>
std::error_code finish_window_sums(const MsmPlan& p, MsmGroup group, void* d_sums,
                                   const Xyzz* extra, void* d_scratch, std::size_t scratch_bytes,
                                   cudaStream_t stream) {
  if (!d_sums || reinterpret_cast<std::uintptr_t>(d_sums) % 16)
    return make_error_code(Errc::invalid_argument);
  Scratch s{};
  if (auto ec = check_call(p, group, d_scratch, scratch_bytes, s)) return ec;
  const Xyzz *y = nullptr, *sums = nullptr;
  if (p.n)
    if (auto ec = reduce(p, s, y, sums, stream)) return ec;
  return write_window_sums(p, group, d_sums, y, sums, extra, stream);
}

template <typename Affine>
std::error_code run_msm(const MsmPlan& p, XyzzOf<Affine>* d_result, const Affine* d_points,
                        const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                        cudaStream_t stream) {
  // Refused before the sort is enqueued, not after.
  if (p.group != detail::MsmGroupTraits<Affine>::kGroup)
    return make_error_code(Errc::invalid_argument);
  if (auto ec = msm_sort_scalars(p, d_scalars, d_scratch, scratch_bytes, stream)) return ec;
  for (unsigned part = 0; part < p.parts && p.n; ++part)
    if (auto ec = add_points(p, part, d_points, d_scratch, scratch_bytes, stream)) return ec;
  return finish(p, detail::MsmGroupTraits<Affine>::kGroup, d_result, d_scratch, scratch_bytes,
                stream);
}

template <typename Affine>
std::error_code run_msm(XyzzOf<Affine>* d_result, const Affine* d_points, const Fr* d_scalars,
                        std::size_t n, void* d_scratch, std::size_t scratch_bytes,
                        cudaStream_t stream) {
  int device = 0;
  if (auto ec = make_cuda_error(cudaGetDevice(&device))) return ec;
  MsmPlan p;
  if (auto ec = plan_msm(detail::MsmGroupTraits<Affine>::kGroup, n, device, p)) return ec;
  return run_msm(p, d_result, d_points, d_scalars, d_scratch, scratch_bytes, stream);
}

template <typename Affine>
std::error_code run_msm_window_sums(const MsmPlan& p, void* d_sums, const Affine* d_points,
                                    const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                                    cudaStream_t stream) {
  constexpr MsmGroup group = detail::MsmGroupTraits<Affine>::kGroup;
  if (p.group != group) return make_error_code(Errc::invalid_argument);
  if (auto ec = msm_sort_scalars(p, d_scalars, d_scratch, scratch_bytes, stream)) return ec;
  for (unsigned part = 0; part < p.parts && p.n; ++part)
    if (auto ec = add_points(p, part, d_points, d_scratch, scratch_bytes, stream)) return ec;
  return finish_window_sums<XyzzOf<Affine>>(p, group, d_sums, nullptr, d_scratch, scratch_bytes,
                                            stream);
}

// sparse_msm for either group (msm.hpp; plan_sparse_msm lays out the
// scratch): the ones' sum, the tail's Pippenger over the rest by index, and
// their sum: in *d_result (d_sums null), or left as the tail's window sums
// with the ones as their extra (sparse_msm_window_sums).
template <typename Affine>
std::error_code run_sparse_msm(const SparseMsmPlan& p, XyzzOf<Affine>* d_result, void* d_sums,
                               const Affine* d_points, const std::uint32_t* d_ones,
                               const std::uint32_t* d_rest, const Fr* d_rest_scalars,
                               void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  using Xyzz = XyzzOf<Affine>;
  constexpr MsmGroup group = detail::MsmGroupTraits<Affine>::kGroup;
  auto aligned = [](const void* q, std::size_t a) {
    return reinterpret_cast<std::uintptr_t>(q) % a == 0;
  };
  if (p.group != group || p.rest.group != group || (!d_result && !d_sums) ||
      (d_sums && !aligned(d_sums, 16)) || !d_scratch || !aligned(d_scratch, 256) ||
      scratch_bytes < p.scratch_bytes || (p.ones && (!d_points || !d_ones)) ||
      (p.rest.n && (!d_points || !d_rest || !d_rest_scalars)) ||
      (d_points && !aligned(d_points, 16)))
    return make_error_code(Errc::invalid_argument);
  // A plan of plan_sparse_msm's shape: every one in some thread's share.
  if (p.ones && (p.ones_threads == 0 ||
                 (p.ones_sum == OnesSum::batch_affine
                      ? p.ones_batch == 0
                      : p.ones_sum != OnesSum::mixed_additions ||
                            p.ones_threads * p.ones_slice < p.ones)))
    return make_error_code(Errc::invalid_argument);
  auto* base = static_cast<unsigned char*>(d_scratch);
  const std::size_t tail_bytes = p.rest.scratch_bytes;
  Scratch tail{};
  if (auto ec = check_call(p.rest, group, base, tail_bytes, tail)) return ec;

  // The two parts side by side where there are both: the rest's Pippenger
  // ends in chains of dependent additions on few threads (about 5 ms in G1
  // and 17 ms in G2 whatever the size), which leave most of the SMs idle;
  // the ones' sum, at the lesser priority, fills them. Their scratch does
  // not overlap. Without a fork both run on the caller's stream.
  std::optional<ForkedStreams> fork;
  cudaStream_t rest_stream = stream, ones_stream = stream;
  if (p.ones && p.rest.n) {
    fork.emplace(stream);
    if (!fork->error()) {
      rest_stream = fork->high();
      ones_stream = fork->low();
    }
  }
  const Xyzz *y = nullptr, *window_sums = nullptr;
  if (p.rest.n) {
    if (auto ec = sort_scalars(p.rest, d_rest_scalars, d_rest, base, tail_bytes, rest_stream))
      return ec;
    if (auto ec = add_points(p.rest, 0, d_points, base, tail_bytes, rest_stream)) return ec;
    if (p.ones && p.ones_start == OnesStart::after_the_buckets && fork && !fork->error())
      if (auto ec = fork->low_follows_high()) return ec;
    if (auto ec = reduce(p.rest, tail, y, window_sums, rest_stream)) return ec;
  }
  const Xyzz* ones_sum = nullptr;
  if (p.ones) {
    Xyzz* buffers[2] = {reinterpret_cast<Xyzz*>(base + p.partials_at[0]),
                        reinterpret_cast<Xyzz*>(base + p.partials_at[1])};
    if (p.ones_sum == OnesSum::batch_affine) {
      if (auto ec = launch<detail::sum_ones_batch_affine_kernel<Affine>>(
              p.ones_threads, ones_stream, buffers[0], d_points, d_ones, p.ones, p.ones_threads,
              p.ones_batch, reinterpret_cast<Affine*>(base + p.ones_accumulators_at),
              reinterpret_cast<detail::FieldOf<Affine>*>(base + p.ones_prefixes_at)))
        return ec;
    } else if (auto ec = launch<detail::sum_indexed_kernel<Affine>>(
                   p.ones_threads, ones_stream, buffers[0], d_points, d_ones, p.ones,
                   p.ones_slice)) {
      return ec;
    }
    std::size_t count = p.ones_threads;
    int side = 0;
    while (count > 1) {
      const std::size_t next = (count + detail::kOnesGroup - 1) / detail::kOnesGroup;
      if (auto ec = launch<detail::sum_partials_kernel<Xyzz>>(next, ones_stream,
                                                              buffers[1 - side], buffers[side],
                                                              count))
        return ec;
      count = next;
      side = 1 - side;
    }
    ones_sum = buffers[side];
  }
  if (fork)
    if (auto ec = fork->join()) return ec;
  if (d_sums) return write_window_sums(p.rest, group, d_sums, y, window_sums, ones_sum, stream);
  if (p.rest.n)
    if (auto ec = combine_windows(p.rest, d_result, y, window_sums, stream)) return ec;
  return launch<detail::add_ones_kernel<Xyzz>>(1, stream, d_result, ones_sum, p.rest.n > 0);
}

}  // namespace stoker::kernels::gpu::detail::pippenger

// GPU point check: on the curve and in G1 or G2 (g1.cuh's and g2.cuh's
// on_curve and in_subgroup, the same arithmetic as the host check), the
// smallest failing index kept with an atomic minimum, over the whole array
// or range by range: one thread a point, or batched (msm.hpp,
// detail/point_check_batch.hpp) with each point's test only where the
// batch fails.
#include <bit>
#include <cstring>
#include <span>

#include "common/error.hpp"
#include "common/os_random.hpp"
#include "kernels/detail/chacha20.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_gpu_steps.cuh"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/detail/point_check_batch.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu {
namespace {

__global__ void first_bad_init_kernel(unsigned long long* first_bad, unsigned long long n) {
  *first_bad = n;
}

// only_if: null, or a word that must be non-zero for the range to be
// tested (the batched check's verdict, read on the device: no round trip).
template <typename Affine>
__global__ void check_points_kernel(unsigned long long* first_bad, const Affine* points,
                                    std::size_t begin, std::size_t count, const unsigned* only_if) {
  const std::size_t k = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (k >= count) return;
  if (only_if && *only_if == 0) return;
  const std::size_t i = begin + k;
  // A point past the smallest bad index found so far cannot change the answer.
  if (i >= *reinterpret_cast<volatile unsigned long long*>(first_bad)) return;
  const Affine p = detail::load_affine(points + i);
  if (!on_curve(p) || !in_subgroup(p)) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

template <typename Affine>
std::error_code check_range(std::uint64_t* d_first_bad, const Affine* d_points, std::size_t begin,
                            std::size_t end, cudaStream_t stream,
                            const unsigned* only_if = nullptr) {
  if (!d_first_bad || begin > end || (end > begin && !d_points) ||
      reinterpret_cast<std::uintptr_t>(d_points) % 16)
    return make_error_code(Errc::invalid_argument);
  if (end == begin) return {};
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<check_points_kernel<Affine>>(end - begin, g))
    return ec;
  check_points_kernel<Affine><<<g.blocks, g.threads, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(d_first_bad), d_points, begin, end - begin, only_if);
  return make_cuda_error(cudaGetLastError());
}

// The batch's first step, one thread per ChaCha20 block (four points): each
// point's curve equation, and its W digits as sort entries (window-major,
// key window << (c + 1) | digit - 1, or kNoKey for digit 0; value its index
// in the range).
template <typename Affine>
__global__ void coin_digits_kernel(const Affine* __restrict__ points, std::size_t begin,
                                   std::size_t end, std::uint64_t first_block, std::size_t blocks,
                                   detail::ChaChaKey key, std::uint32_t tag, unsigned c,
                                   unsigned windows, std::uint32_t* __restrict__ keys,
                                   std::uint32_t* __restrict__ values, unsigned* failed) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= blocks) return;
  const std::uint64_t block = first_block + t;
  const detail::CoinSource src = detail::coin_source(block * 4, tag);
  std::uint32_t stream[16];
  detail::chacha20_block(key, src.counter, src.nonce, stream);
  const std::size_t n = end - begin;
  STOKER_UNROLL
  for (unsigned j = 0; j < 4; ++j) {
    const std::uint64_t i = block * 4 + j;
    if (i < begin || i >= end) continue;
    const std::size_t k = i - begin;
    if (!on_curve(detail::load_affine(points + i))) atomicExch(failed, 1u);
    for (unsigned w = 0; w < windows; ++w) {
      const std::uint32_t d = detail::coin_digit(stream + 4 * j, c, w);
      keys[w * n + k] = d ? (w << (c + 1)) + d - 1 : detail::kNoKey;
      values[w * n + k] = static_cast<std::uint32_t>(k);
    }
  }
}

// The batch's last step: every bucket that got a point, tested exactly.
template <typename Affine>
__global__ void test_buckets_kernel(const detail::XyzzOf<Affine>* buckets,
                                    const std::uint8_t* filled, std::size_t count,
                                    unsigned* failed) {
  const std::size_t b = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (b >= count || !filled[b]) return;
  if (*reinterpret_cast<volatile unsigned*>(failed)) return;
  if (!in_subgroup(to_affine(detail::load_xyzz(buckets + b)))) atomicExch(failed, 1u);
}

constexpr std::size_t kAlign = 256;
constexpr std::size_t align_up(std::size_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

template <typename Affine>
std::error_code check_batched(const BatchCheckPlan& plan, std::uint64_t* d_first_bad,
                              const Affine* d_points, std::size_t begin, std::size_t end,
                              const PointCheckKey& key, void* d_scratch, std::size_t scratch_bytes,
                              cudaStream_t stream) {
  namespace pip = detail::pippenger;
  constexpr MsmGroup group = detail::MsmGroupTraits<Affine>::kGroup;
  // A plan not of plan_batch_check's shape could hold fewer than 64 bits of
  // coins, or read past a point's.
  if (plan.bucket_bits < detail::kCheckMinBits || plan.bucket_bits > detail::kCheckMaxBits ||
      plan.windows != detail::check_windows(plan.bucket_bits) || plan.slice == 0)
    return make_error_code(Errc::invalid_argument);
  if (plan.group != group || !d_first_bad || begin > end || end - begin > plan.max_points ||
      (end > begin && !d_points) || reinterpret_cast<std::uintptr_t>(d_points) % 16 ||
      !d_scratch || reinterpret_cast<std::uintptr_t>(d_scratch) % kAlign ||
      scratch_bytes < plan.scratch_bytes || plan.flag_at + sizeof(unsigned) > plan.scratch_bytes)
    return make_error_code(Errc::invalid_argument);
  const std::size_t n = end - begin;
  if (n == 0) return {};
  MsmPlan sums;
  if (auto ec = pip::plan_bucket_sums(group, n, plan.bucket_bits, plan.windows, plan.slice, sums))
    return ec;
  pip::Scratch s{};
  if (auto ec = pip::check_call(sums, group, d_scratch, plan.flag_at, s)) return ec;
  auto* failed = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(d_scratch) + plan.flag_at);
  if (auto ec = make_cuda_error(cudaMemsetAsync(failed, 0, sizeof(unsigned), stream))) return ec;
  detail::ChaChaKey k{};
  std::memcpy(k.words, key.words, sizeof k.words);
  const std::uint64_t first_block = begin / 4, blocks = (end - 1) / 4 - first_block + 1;
  if (auto ec = pip::launch<coin_digits_kernel<Affine>>(
          blocks, stream, d_points, begin, end, first_block, static_cast<std::size_t>(blocks), k,
          static_cast<std::uint32_t>(group) + 1, plan.bucket_bits, plan.windows,
          s.at<std::uint32_t>(s.l.keys[0]), s.at<std::uint32_t>(s.l.values[0]), failed))
    return ec;
  if (auto ec = pip::sort_entries(sums, s, stream)) return ec;
  if (auto ec = msm_add_points(sums, 0, d_points + begin, d_scratch, plan.flag_at, stream))
    return ec;
  const std::size_t buckets = std::size_t{sums.windows} * sums.buckets;
  if (auto ec = pip::launch<test_buckets_kernel<Affine>>(
          buckets, stream, s.at<const detail::XyzzOf<Affine>>(s.l.buckets),
          s.at<const std::uint8_t>(s.l.filled), buckets, failed))
    return ec;
  return check_range(d_first_bad, d_points, begin, end, stream, failed);
}

}  // namespace

std::error_code check_points_begin(std::uint64_t* d_first_bad, std::size_t n, cudaStream_t stream) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  if (!d_first_bad) return make_error_code(Errc::invalid_argument);
  first_bad_init_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<unsigned long long*>(d_first_bad), n);
  return make_cuda_error(cudaGetLastError());
}

std::error_code check_points_range(std::uint64_t* d_first_bad, const G1Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream) {
  return check_range(d_first_bad, d_points, begin, end, stream);
}

std::error_code check_points_range(std::uint64_t* d_first_bad, const G2Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream) {
  return check_range(d_first_bad, d_points, begin, end, stream);
}

std::error_code random_point_check_key(PointCheckKey& key) {
  return common::os_random(std::as_writable_bytes(std::span(key.words)));
}

std::error_code plan_batch_check(MsmGroup group, std::size_t max_points, int device,
                                 BatchCheckPlan& plan) {
  if (!detail::known_group(group) || max_points == 0)
    return make_error_code(Errc::invalid_argument);
  const detail::BatchCheckShape shape = detail::batch_check_shape(max_points);
  BatchCheckPlan p;
  p.group = group;
  p.max_points = max_points;
  p.bucket_bits = shape.bits;
  p.windows = shape.windows;
  // One slice for every range of the plan, so that a smaller range's
  // scratch is never larger than the largest's.
  p.slice = detail::pippenger::accumulate_slice(max_points * shape.windows, device);
  if (p.slice == 0) return make_error_code(Errc::invalid_argument);
  MsmPlan sums;
  if (auto ec = detail::pippenger::plan_bucket_sums(group, max_points, p.bucket_bits, p.windows,
                                                    p.slice, sums))
    return ec;
  p.flag_at = align_up(sums.scratch_bytes);
  p.scratch_bytes = p.flag_at + kAlign;
  plan = p;
  return {};
}

std::error_code check_points_batched(const BatchCheckPlan& plan, std::uint64_t* d_first_bad,
                                     const G1Affine* d_points, std::size_t begin, std::size_t end,
                                     const PointCheckKey& key, void* d_scratch,
                                     std::size_t scratch_bytes, cudaStream_t stream) {
  return check_batched(plan, d_first_bad, d_points, begin, end, key, d_scratch, scratch_bytes,
                       stream);
}

std::error_code check_points_batched(const BatchCheckPlan& plan, std::uint64_t* d_first_bad,
                                     const G2Affine* d_points, std::size_t begin, std::size_t end,
                                     const PointCheckKey& key, void* d_scratch,
                                     std::size_t scratch_bytes, cudaStream_t stream) {
  return check_batched(plan, d_first_bad, d_points, begin, end, key, d_scratch, scratch_bytes,
                       stream);
}

std::error_code check_points(std::uint64_t* d_first_bad, const G1Affine* d_points, std::size_t n,
                             cudaStream_t stream) {
  if (!d_first_bad || (n && !d_points) || reinterpret_cast<std::uintptr_t>(d_points) % 16)
    return make_error_code(Errc::invalid_argument);
  if (auto ec = check_points_begin(d_first_bad, n, stream)) return ec;
  return check_points_range(d_first_bad, d_points, 0, n, stream);
}

}  // namespace stoker::kernels::gpu

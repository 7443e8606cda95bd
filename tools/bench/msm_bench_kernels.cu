// See msm_bench_kernels.hpp.
#include <cstdint>
#include <cstring>

#include "common/error.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/msm.hpp"
#include "tools/bench/msm_bench_kernels.hpp"

namespace stoker::tools {
namespace {

using kernels::G1Affine;
using kernels::G2Affine;
using kernels::MsmGroup;
using kernels::detail::XyzzOf;

constexpr unsigned kTable = 64;  // G1: 6 KiB affine + 12 KiB XYZZ; G2 twice that

template <typename Affine>
struct Table {
  Affine affine[kTable];
  XyzzOf<Affine> xyzz[kTable];
};

// XYZZ operands with ZZ != 1, as bucket sums have.
template <typename Affine>
__global__ void xyzz_table_kernel(Table<Affine>* t) {
  const unsigned i = threadIdx.x;
  if (i >= kTable) return;
  XyzzOf<Affine> p = XyzzOf<Affine>::infinity();
  kernels::add_mixed(p, t->affine[i]);
  p = kernels::dbl(p);
  kernels::add_mixed(p, t->affine[(i + 1) % kTable]);
  t->xyzz[i] = p;
}

template <bool kXyzz, typename Affine>
__global__ void add_rate_kernel(const Table<Affine>* t, std::uint64_t* sink, unsigned iterations) {
  using Xyzz = XyzzOf<Affine>;
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  Xyzz acc = Xyzz::infinity();
  kernels::add_mixed(acc, t->affine[tid % kTable]);
  for (unsigned k = 0; k < iterations; ++k) {
    const unsigned j = (tid + 7 * k) % kTable;
    if (kXyzz)
      kernels::add(acc, kernels::gpu::detail::load_xyzz(t->xyzz + j));
    else
      kernels::add_mixed(acc, kernels::gpu::detail::load_affine(t->affine + j));
  }
  std::uint64_t w[sizeof(Xyzz) / 8];
  memcpy(w, &acc, sizeof acc);
  std::uint64_t h = 0;
  for (std::uint64_t x : w) h ^= x;
  sink[tid % 1024] = h;
}

// The point generator's scratch follows the table.
template <typename Affine>
constexpr std::size_t kTableBytes = (sizeof(Table<Affine>) + 255) / 256 * 256;

template <typename Affine>
std::error_code fill(void* d_table, cudaStream_t stream) {
  constexpr MsmGroup group = kernels::detail::MsmGroupTraits<Affine>::kGroup;
  auto* t = static_cast<Table<Affine>*>(d_table);
  void* scratch = static_cast<unsigned char*>(d_table) + kTableBytes<Affine>;
  if (auto ec = kernels::gpu::random_points(
          t->affine, kTable, 2024, scratch,
          kernels::gpu::random_points_scratch_bytes(group, kTable), stream))
    return ec;
  xyzz_table_kernel<<<1, kTable, 0, stream>>>(t);
  return make_cuda_error(cudaGetLastError());
}

template <typename Affine>
std::error_code enqueue(bool xyzz, const void* d_table, void* d_sink, std::size_t threads,
                        unsigned iterations, cudaStream_t stream) {
  const auto* t = static_cast<const Table<Affine>*>(d_table);
  auto* sink = static_cast<std::uint64_t*>(d_sink);
  // The occupancy calculator per instantiation: the two kernels share a
  // type but not a register count.
  auto kernel = xyzz ? add_rate_kernel<true, Affine> : add_rate_kernel<false, Affine>;
  int min_grid = 0, block = 0;
  if (auto e = cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel))
    return make_cuda_error(e);
  const std::size_t blocks = (threads + block - 1) / block;
  kernel<<<static_cast<unsigned>(blocks), block, 0, stream>>>(t, sink, iterations);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace

std::size_t add_rate_table_bytes(MsmGroup group) {
  const std::size_t table = group == MsmGroup::g2 ? kTableBytes<G2Affine> : kTableBytes<G1Affine>;
  return table + kernels::gpu::random_points_scratch_bytes(group, kTable);
}

std::error_code fill_add_rate_table(void* d_table, cudaStream_t stream, MsmGroup group) {
  return group == MsmGroup::g2 ? fill<G2Affine>(d_table, stream) : fill<G1Affine>(d_table, stream);
}

std::error_code enqueue_add_rate(bool xyzz, const void* d_table, void* d_sink, std::size_t threads,
                                 unsigned iterations, cudaStream_t stream, MsmGroup group) {
  return group == MsmGroup::g2
             ? enqueue<G2Affine>(xyzz, d_table, d_sink, threads, iterations, stream)
             : enqueue<G1Affine>(xyzz, d_table, d_sink, threads, iterations, stream);
}

}  // namespace stoker::tools

// See msm_bench_kernels.hpp.
#include <cstdint>
#include <cstring>

#include "common/error.hpp"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/msm.hpp"
#include "tools/bench/msm_bench_kernels.hpp"

namespace stoker::tools {
namespace {

using kernels::G1Affine;
using kernels::G1Xyzz;

constexpr unsigned kTable = 64;  // 6 KiB affine + 12 KiB XYZZ

struct Table {
  G1Affine affine[kTable];
  G1Xyzz xyzz[kTable];
};

// XYZZ operands with ZZ != 1, as bucket sums have.
__global__ void xyzz_table_kernel(Table* t) {
  const unsigned i = threadIdx.x;
  if (i >= kTable) return;
  G1Xyzz p = G1Xyzz::infinity();
  kernels::add_mixed(p, t->affine[i]);
  p = kernels::dbl(p);
  kernels::add_mixed(p, t->affine[(i + 1) % kTable]);
  t->xyzz[i] = p;
}

template <bool kXyzz>
__global__ void add_rate_kernel(const Table* t, std::uint64_t* sink, unsigned iterations) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  G1Xyzz acc = G1Xyzz::infinity();
  kernels::add_mixed(acc, t->affine[tid % kTable]);
  for (unsigned k = 0; k < iterations; ++k) {
    const unsigned j = (tid + 7 * k) % kTable;
    if (kXyzz)
      kernels::add(acc, kernels::gpu::detail::load_xyzz(t->xyzz + j));
    else
      kernels::add_mixed(acc, kernels::gpu::detail::load_affine(t->affine + j));
  }
  std::uint64_t w[sizeof(G1Xyzz) / 8];
  memcpy(w, &acc, sizeof acc);
  std::uint64_t h = 0;
  for (std::uint64_t x : w) h ^= x;
  sink[tid % 1024] = h;
}

}  // namespace

// The point generator's scratch follows the table.
constexpr std::size_t kTableBytes = (sizeof(Table) + 255) / 256 * 256;

std::size_t add_rate_table_bytes() {
  return kTableBytes + kernels::gpu::random_points_scratch_bytes(kTable);
}

std::error_code fill_add_rate_table(void* d_table, cudaStream_t stream) {
  auto* t = static_cast<Table*>(d_table);
  void* scratch = static_cast<unsigned char*>(d_table) + kTableBytes;
  if (auto ec =
          kernels::gpu::random_points(t->affine, kTable, 2024, scratch,
                                      kernels::gpu::random_points_scratch_bytes(kTable), stream))
    return ec;
  xyzz_table_kernel<<<1, kTable, 0, stream>>>(t);
  return make_cuda_error(cudaGetLastError());
}

std::error_code enqueue_add_rate(bool xyzz, const void* d_table, void* d_sink, std::size_t threads,
                                 unsigned iterations, cudaStream_t stream) {
  const auto* t = static_cast<const Table*>(d_table);
  auto* sink = static_cast<std::uint64_t*>(d_sink);
  // The occupancy calculator per instantiation: the two kernels share a
  // type but not a register count.
  auto kernel = xyzz ? add_rate_kernel<true> : add_rate_kernel<false>;
  int min_grid = 0, block = 0;
  if (auto e = cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel))
    return make_cuda_error(e);
  const std::size_t blocks = (threads + block - 1) / block;
  kernel<<<static_cast<unsigned>(blocks), block, 0, stream>>>(t, sink, iterations);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::tools

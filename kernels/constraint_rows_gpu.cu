// The rows' evaluation on a GPU: one thread per row, A's and B's terms
// summed from the witness (gathers of 32 bytes, as the terms name their
// wires), a, b and c stored at the row's place in stoker's order.
#include "common/error.hpp"
#include "kernels/constraint_rows.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::kernels::gpu {
namespace {

__global__ void evaluate_rows_kernel(ConstraintRows a_rows, ConstraintRows b_rows, const Fr* w,
                                     std::size_t rows, std::uint64_t exponent, Fr* a, Fr* b,
                                     Fr* c) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const Fr sa = constraint_rows::row_at(a_rows, i, w);
  const Fr sb = constraint_rows::row_at(b_rows, i, w);
  const std::size_t at = (exponent * i) & (rows - 1);
  a[at] = sa;
  b[at] = sb;
  c[at] = sa * sb;
}

}  // namespace

std::error_code evaluate_constraint_rows(ConstraintRows a_rows, ConstraintRows b_rows, const Fr* w,
                                         unsigned log_n, Fr* d_a, Fr* d_b, Fr* d_c,
                                         cudaStream_t stream) {
  if (log_n > 32 || !a_rows.begin || !a_rows.words || !b_rows.begin || !b_rows.words || !w ||
      !d_a || !d_b || !d_c)
    return make_error_code(Errc::invalid_argument);
  const std::size_t rows = std::size_t{1} << log_n;
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<evaluate_rows_kernel>(rows, g)) return ec;
  evaluate_rows_kernel<<<g.blocks, g.threads, 0, stream>>>(a_rows, b_rows, w, rows,
                                                           snarkjs_root_exponent(), d_a, d_b, d_c);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::kernels::gpu

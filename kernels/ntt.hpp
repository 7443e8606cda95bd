// The NTT family over Fr: ntt, intt, coset_ntt, coset_intt for n = 2^log_n,
// natural order in and out, in place (out == in) or out of place, batched
// (`batch` vectors of n elements, back to back).
//
// Definitions: omega_n = g^((r-1)/n) with g = 7;
//   ntt(x)_i       = sum_j x_j omega^(ij)
//   coset_ntt(x)_i = sum_j x_j (g omega^i)^j
// intt and coset_intt are their exact inverses (they include the 1/n).
//
// gpu:: functions take device pointers of the current device, enqueue on
// `stream` and return at once; errors (bad sizes, launch failures) come back
// as std::error_code, nothing aborts. Twiddle tables are built on the device
// the first time a (device, log_n) is used (that call allocates and waits);
// later calls allocate nothing. Thread safe.
//
// cpu:: functions are the multithreaded reference; they give the same bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

#include "kernels/field.cuh"

namespace stoker::kernels {

enum class NttKind { forward, inverse, coset_forward, coset_inverse };

// Index arithmetic is 32-bit: log_n may go up to 31 (2^28 is the target).
inline constexpr unsigned kMaxLogN = 31;

namespace gpu {

std::error_code transform(NttKind kind, Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                          cudaStream_t stream);

inline std::error_code ntt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                           cudaStream_t stream) {
  return transform(NttKind::forward, out, in, log_n, batch, stream);
}
inline std::error_code intt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                            cudaStream_t stream) {
  return transform(NttKind::inverse, out, in, log_n, batch, stream);
}
inline std::error_code coset_ntt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                                 cudaStream_t stream) {
  return transform(NttKind::coset_forward, out, in, log_n, batch, stream);
}
inline std::error_code coset_intt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                                  cudaStream_t stream) {
  return transform(NttKind::coset_inverse, out, in, log_n, batch, stream);
}

// Builds (or finds) the tables of (current device, log_n) now, so that a
// later timed or hot-path call does no allocation.
std::error_code prepare(unsigned log_n);

}  // namespace gpu

namespace cpu {

// threads == 0: std::thread::hardware_concurrency().
void transform(NttKind kind, Fr* out, const Fr* in, unsigned log_n, std::size_t batch = 1,
               unsigned threads = 0);

inline void ntt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch = 1) {
  transform(NttKind::forward, out, in, log_n, batch);
}
inline void intt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch = 1) {
  transform(NttKind::inverse, out, in, log_n, batch);
}
inline void coset_ntt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch = 1) {
  transform(NttKind::coset_forward, out, in, log_n, batch);
}
inline void coset_intt(Fr* out, const Fr* in, unsigned log_n, std::size_t batch = 1) {
  transform(NttKind::coset_inverse, out, in, log_n, batch);
}

}  // namespace cpu
}  // namespace stoker::kernels

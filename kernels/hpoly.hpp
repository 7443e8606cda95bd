// The Groth16 H polynomial. For evaluations a, b, c over the domain
// of size n = 2^log_n:
//   A = intt(a), B = intt(b), C = intt(c);
//   A' = coset_ntt(A), B' = coset_ntt(B), C' = coset_ntt(C);
//   H' = (A' * B' - C') * (g^n - 1)^-1 pointwise;  h = coset_intt(H').
// The output is all n coefficients of h, natural order.
//
// gpu::hpoly overwrites a, b and c (they hold scratch afterwards) and writes
// h, which may be the same buffer as any of them. Device pointers of the
// current device, enqueued on `stream`; the same table rules as ntt.hpp.
// cpu::hpoly is the multithreaded reference and leaves its inputs alone.
#pragma once

#include <cuda_runtime_api.h>

#include <system_error>

#include "kernels/field.cuh"

namespace stoker::kernels {

// (g^n - 1)^-1 for n = 2^log_n: the inverse of the vanishing polynomial
// x^n - 1 on the coset g * <omega_n>, where it is the constant g^n - 1.
Fr hpoly_z_inverse(unsigned log_n);

namespace gpu {
std::error_code hpoly(Fr* h, Fr* a, Fr* b, Fr* c, unsigned log_n, cudaStream_t stream);
// Builds the tables of (current device, log_n) and loads every kernel hpoly
// launches, so that a later call neither allocates nor loads code: under
// lazy loading a kernel's first launch may wait for the device's queued work.
std::error_code prepare_hpoly(unsigned log_n);
}  // namespace gpu

namespace cpu {
// threads == 0: std::thread::hardware_concurrency().
void hpoly(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n, unsigned threads = 0);
}  // namespace cpu

}  // namespace stoker::kernels

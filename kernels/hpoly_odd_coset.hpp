// The H scalars of a snarkjs proving key: evaluations of P = A B - C on the
// odd coset of the 2n-th roots of unity, the basis a .zkey's H points are
// in (H_i = L^(2n)_{2i+1}(tau) / delta, so sum_i h_i H_i = P(tau) / delta
// with no division by Z and no final inverse transform).
//
// snarkjs builds its roots of unity from 5, the smallest non-residue, where
// stoker's NTTs (ntt.hpp) use the generator 7: omega5_n = 5^((r-1)/n). Both
// are primitive n-th roots, so omega5_n = omega7_n^e for one odd e that
// serves every n <= 2^32 (taken mod n): snarkjs's point i is stoker's point
// e i mod n. That lets the odd coset run on stoker's transforms, on the CPU
// and the GPU alike:
//   A = intt(a permuted into stoker's order), then A_j *= s^j for
//   s = omega5_2n, then ntt: entry j is A(s omega7_n^j) = A(omega5_2n^(2i+1))
//   for the i with e i = j mod n.
// The same for B and C; h_i = A' B' - C' at stoker's index e i mod n.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <system_error>

#include "kernels/field.cuh"

namespace stoker::kernels {

// omega5_n = 5^((r-1)/n) for n = 2^log_n, log_n <= 32: the root a snarkjs
// key's domain of n points is built on (point i is omega5_n^i).
Fr snarkjs_root_of_unity(unsigned log_n);

// The odd e < 2^32 with omega5_n = omega7_n^(e mod n) for every n <= 2^32.
std::uint32_t snarkjs_root_exponent();

// Where snarkjs's points of a domain of 2^log_n points sit among stoker's:
// point i at e i mod n. e is read once, for loops over a domain's points.
class SnarkjsToNttIndex {
 public:
  explicit SnarkjsToNttIndex(unsigned log_n)
      : mask_((std::size_t{1} << log_n) - 1), e_(snarkjs_root_exponent()) {}
  std::size_t operator()(std::size_t i) const { return (e_ * (i & mask_)) & mask_; }

 private:
  std::size_t mask_, e_;
};

// The inverse: stoker's point j is snarkjs's point e^-1 j mod n.
class NttToSnarkjsIndex {
 public:
  explicit NttToSnarkjsIndex(unsigned log_n)
      : mask_((std::size_t{1} << log_n) - 1), e_inverse_(inverse(snarkjs_root_exponent())) {}
  std::size_t operator()(std::size_t j) const { return (e_inverse_ * (j & mask_)) & mask_; }

 private:
  // e^-1 mod 2^64 by Newton's iteration x <- x (2 - e x), which doubles
  // the bits that are right; x = e is right in 3 of them (e e = 1 mod 8).
  static std::uint64_t inverse(std::uint64_t e) {
    std::uint64_t x = e;
    for (int i = 0; i < 5; ++i) x *= 2 - e * x;
    return x;
  }
  std::size_t mask_, e_inverse_;
};

inline std::size_t snarkjs_point_to_ntt_index(std::size_t i, unsigned log_n) {
  return SnarkjsToNttIndex(log_n)(i);
}

// In "stoker's order" entry j of a, b, c is the evaluation at omega7_n^j and
// entry j of h belongs to the coset point s omega7_n^j (s = omega5_2n): the
// order the transforms work in. A prover that writes a, b, c there (row i
// of a zkey to e i mod n) and holds the key's H points there too (H_i at
// e i mod n, permuted once when the key is loaded) needs no permutation per
// proof: sum_j h_j H'_j is the same sum.

namespace gpu {
// h from a, b, c in stoker's order, on `stream`: three inverse NTTs, the
// scaling by s^j, three NTTs, A B - C. Overwrites a, b and c; h may be one
// of them. Device pointers of the current device; the tables of ntt.hpp.
std::error_code hpoly_odd_coset(Fr* h, Fr* a, Fr* b, Fr* c, unsigned log_n, cudaStream_t stream);
// Builds the tables of (current device, log_n) and loads the kernels.
std::error_code prepare_hpoly_odd_coset(unsigned log_n);
}  // namespace gpu

namespace cpu {
// h_i = (a b - c)(omega5_2n^(2i+1)) for i < n = 2^log_n (log_n <= 31), with
// a, b, c the evaluations at snarkjs's points omega5_n^i, natural order in
// and out. threads == 0: std::thread::hardware_concurrency(). Leaves its
// inputs alone; h may not alias them.
void hpoly_odd_coset(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n,
                     unsigned threads = 0);
// The same in stoker's order (as gpu::hpoly_odd_coset, bit for bit).
void hpoly_odd_coset_in_ntt_order(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n,
                                  unsigned threads = 0);
}  // namespace cpu

}  // namespace stoker::kernels

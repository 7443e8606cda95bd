// The rows of a snarkjs key's A and B matrices, and their evaluation at a
// witness: a = A w, b = B w, c = a * b, the evaluations a Groth16 prover
// starts from (c = a * b is how snarkjs proves: the C matrix is not in a
// .zkey).
//
// A matrix is held by rows: `begin` (rows + 1 offsets into `words`) and
// `words`, each row a run of terms. A term is a word with the wire in its
// low 30 bits and the coefficient's kind in its top two (1, -1, or another),
// followed for another by the coefficient's 8 words (Fr's limbs, Montgomery
// form, low word first). Most coefficients are 1 or -1: a 2^26 PoRep-shaped
// key's 141M terms take 0.6 GB so instead of 5.1 GB. Offsets are 32-bit:
// a matrix holds fewer than 2^32 words (16 GiB).
//
// The CPU's evaluation feeds the CPU prover and the host backend; the GPU's
// runs where a key's rows are resident, so that a proof uploads its witness
// (32 bytes a wire) instead of a, b and c (96 bytes a row) and no CPU
// evaluates rows while the GPU waits: on a host of 16 threads the CPU's
// evaluation of a 2^24 key took 755 ms a proof, its GPU's kernels 256.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <system_error>

#include "common/host_device.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels {

struct ConstraintRows {
  const std::uint32_t* begin = nullptr;  // rows + 1 offsets into words
  const std::uint32_t* words = nullptr;
};

namespace constraint_rows {
constexpr std::uint32_t kWireBits = 30;
constexpr std::uint32_t kWireMask = (std::uint32_t{1} << kWireBits) - 1;
enum Kind : std::uint32_t { kOther = 0, kOne = 1, kMinusOne = 2 };
constexpr std::uint32_t kValueWords = sizeof(Fr) / sizeof(std::uint32_t);

STOKER_HD std::uint32_t term_word(std::uint32_t wire, Kind kind) {
  return wire | (static_cast<std::uint32_t>(kind) << kWireBits);
}
STOKER_HD std::uint32_t wire_of(std::uint32_t word) {
  return word & kWireMask;
}
STOKER_HD Kind kind_of(std::uint32_t word) {
  return static_cast<Kind>(word >> kWireBits);
}
// The words a term takes, its own included.
STOKER_HD std::uint32_t term_words(std::uint32_t word) {
  return 1 + (kind_of(word) == kOther ? kValueWords : 0);
}
// The coefficient stored at `at`, whatever the words' alignment.
STOKER_HD Fr value_at(const std::uint32_t* at) {
  Fr v;
  for (unsigned i = 0; i < 4; ++i)
    v.l[i] = std::uint64_t{at[2 * i]} | (std::uint64_t{at[2 * i + 1]} << 32);
  return v;
}
// x * y, without the product where either is 0 or 1: witnesses are mostly
// 0 and 1 (bits, flags, selectors), so most rows' c needs no product on a
// CPU. The same value as x * y.
STOKER_HD Fr times(const Fr& x, const Fr& y) {
  const Fr one = Fr::one();
  if (x.is_zero() || y.is_zero()) return Fr::zero();
  if (x == one) return y;
  if (y == one) return x;
  return x * y;
}
// Row r of `m` at w.
STOKER_HD Fr row_at(const ConstraintRows& m, std::size_t r, const Fr* w) {
  Fr sum = Fr::zero();
  for (std::uint32_t k = m.begin[r], end = m.begin[r + 1]; k < end;) {
    const std::uint32_t word = m.words[k++];
    const Fr& x = w[wire_of(word)];
    switch (kind_of(word)) {
      case kOne:
        sum += x;
        break;
      case kMinusOne:
        sum -= x;
        break;
      default:
        sum += times(value_at(m.words + k), x);
        k += kValueWords;
    }
  }
  return sum;
}
}  // namespace constraint_rows

// Where row i's values go: at i (snarkjs's order), or at e i mod n
// (stoker's order, hpoly_odd_coset.hpp), where the GPU's transforms want
// them.
enum class RowOrder { snarkjs, ntt };

namespace gpu {
// Rows [0, 2^log_n) of A and B at `w` into d_a, d_b, d_c (2^log_n entries
// each) in stoker's order, on `stream`. Every pointer is a device pointer
// of the current device; `w` holds every wire the rows name (unchecked:
// the rows were checked when they were built).
std::error_code evaluate_constraint_rows(ConstraintRows a_rows, ConstraintRows b_rows, const Fr* w,
                                         unsigned log_n, Fr* d_a, Fr* d_b, Fr* d_c,
                                         cudaStream_t stream);
}  // namespace gpu

namespace cpu {
// Rows [begin, end) of the 2^log_n into a, b, c (2^log_n entries each) at
// their places in `order`: one share of a producer's work; disjoint rows
// write disjoint entries. In stoker's order the stores go past the caches
// and end with a fence, so that another thread may read them once told.
void evaluate_constraint_rows(ConstraintRows a_rows, ConstraintRows b_rows, const Fr* w,
                              unsigned log_n, std::size_t begin, std::size_t end, Fr* a, Fr* b,
                              Fr* c, RowOrder order);
}  // namespace cpu

}  // namespace stoker::kernels

// A Groth16 proving key over BLS12-381 in stoker's one internal form, read
// from either of the formats users hold (engine/groth16/zkey_file.hpp,
// params_file.hpp): the queries as affine points in Montgomery form (the
// kernels' G1Affine / G2Affine, infinity as zeros), the verifying key's
// points beside them, and what only one format carries.
//
// The two formats differ in what a query is indexed by:
// - snarkjs (.zkey): A, B_G1 and B_G2 hold one point per wire (num_vars),
//   infinity where a wire appears in no row of that matrix; L holds one per
//   private wire (num_vars - num_public - 1); H holds n points in the
//   Lagrange basis of the odd coset of the 2n-th roots (5-based roots of
//   unity); the A and B matrices come as `coefficients`.
// - bellman (.params): H holds n - 1 points tau^i Z(tau) / delta; L one per
//   private wire; A holds the public wires then the private wires whose A
//   density bit is set; B_G1 and B_G2 the wires whose B density bits are
//   set (the prover's synthesis gives the bits, not the file).
//
// A value type with no behaviour: who loaded it decides where it lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/uninitialized_vector.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::engine::groth16 {

enum class KeyFormat { snarkjs, bellman };

// A query's points: a reader writes them whole, so resizing leaves them
// unwritten (common/uninitialized_vector.hpp).
template <typename Point>
using PointVector = common::UninitializedVector<Point>;

// What a verifier needs: e(A, B) = e(alpha_1, beta_2) e(sum w_i IC_i, gamma_2)
// e(C, delta_2) over the public wires w_0 = 1, w_1 .. w_num_public.
struct VerifyingKey {
  kernels::G1Affine alpha_1;
  kernels::G2Affine beta_2, gamma_2, delta_2;
  PointVector<kernels::G1Affine> ic;  // num_public + 1 points
};

// One entry of the A or B matrix of a snarkjs key: row `row` (the domain
// point omega^row) gains value * w[signal]. `value` is the coefficient in
// Montgomery form (kernels::Fr as the kernels hold it). Trivial, so a
// reader's resize leaves the entries it writes unwritten (9 GB of them at
// 2^26 would otherwise be zero-filled on one thread first).
struct MatrixEntry {
  std::uint32_t matrix;  // 0: A, 1: B
  std::uint32_t row;
  std::uint32_t signal;
  kernels::Fr value;
};

// How many points each query holds: what a prover checks its input against,
// also where the points themselves live elsewhere (on the devices).
struct QueryCounts {
  std::size_t h = 0, l = 0, a = 0, b_g1 = 0, b_g2 = 0;
};

struct ProvingKey {
  KeyFormat format = KeyFormat::snarkjs;
  unsigned log_n = 0;          // the domain has n = 2^log_n points
  std::size_t num_vars = 0;    // wires, w_0 = 1 included
  std::size_t num_public = 0;  // public wires after w_0

  VerifyingKey vk;
  kernels::G1Affine beta_1, delta_1;

  PointVector<kernels::G1Affine> a, b_g1, l, h;
  PointVector<kernels::G2Affine> b_g2;

  common::UninitializedVector<MatrixEntry> coefficients;  // snarkjs only

  std::size_t domain_size() const { return std::size_t{1} << log_n; }
  std::size_t num_private() const { return num_vars - num_public - 1; }
  QueryCounts counts() const { return {h.size(), l.size(), a.size(), b_g1.size(), b_g2.size()}; }
};

}  // namespace stoker::engine::groth16

// The A and B matrices of a snarkjs key by row, and the evaluations a prover
// starts from: a = A w and b = B w at the domain's points, c = a * b.
//
// A .zkey lists the matrices' entries one by one in the order its writer
// chose; built once per key into compressed rows, they let threads take
// disjoint ranges of rows with no shared writes. c = a * b is how snarkjs
// proves (the C matrix is not in the file): a witness that breaks a
// constraint still gives evaluations, and only the proof's pairing check
// then tells (the prover runs it).
//
// A term whose coefficient is 1 or -1, as most are, is one 4-byte word
// (a 2^26 PoRep-shaped key's 141M terms: 0.6 GB instead of 5.1 GB).
//
// Immutable after from(); evaluate() may run from several threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/proving_key.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

class ConstraintMatrices {
 public:
  // Refuses a bellman key (its prover hands a, b, c itself), entries out of
  // range, naming the entry, and circuits of 2^30 wires or more.
  static Result<ConstraintMatrices> from(const ProvingKey& key);

  // a[i], b[i] = row i of A w, B w; c[i] = a[i] b[i]; every span n long
  // (rows without entries give 0). `w` holds num_vars values, Montgomery
  // form. threads == 0: the hardware's.
  Error evaluate(std::span<const kernels::Fr> w, std::span<kernels::Fr> a, std::span<kernels::Fr> b,
                 std::span<kernels::Fr> c, unsigned threads = 0) const;

  // Where row i's values go: at i (snarkjs's order), or at e i mod n
  // (stoker's order, kernels/hpoly_odd_coset.hpp), where a GPU prover wants
  // them.
  enum class Order { snarkjs, ntt };
  // Rows [begin, end) only, into a, b, c (n entries each) at their places in
  // `order`: one share of a producer's work. Shares of disjoint rows write
  // disjoint entries. `w` is not checked here: evaluate() says what it needs.
  void evaluate_rows(std::span<const kernels::Fr> w, std::size_t begin, std::size_t end,
                     kernels::Fr* a, kernels::Fr* b, kernels::Fr* c, Order order) const;

  std::size_t rows() const { return rows_; }
  std::size_t wires() const { return wires_; }

 private:
  // One matrix's rows, each a run of terms in `words`: a word with the wire
  // (its low 30 bits) and the coefficient's kind (its top two: 1, -1 or
  // another), then, for another, the coefficient's 8 words.
  struct Rows {
    std::vector<std::uint64_t> begin;  // rows + 1 offsets into `words`
    std::vector<std::uint32_t> words;
  };
  // Fills a_ and b_ from entries already checked (rows_, wires_ set).
  void build(std::span<const MatrixEntry> entries);
  std::size_t rows_ = 0, wires_ = 0;
  Rows a_, b_;
};

}  // namespace stoker::engine::groth16

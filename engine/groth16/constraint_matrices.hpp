// The A and B matrices of a snarkjs key by row (kernels/constraint_rows.hpp
// holds their form and evaluation), built from a key's entries.
//
// A .zkey lists the matrices' entries one by one in the order its writer
// chose; built once per key into rows, they let threads (and a GPU's) take
// disjoint ranges of rows with no shared writes. c = a * b is how snarkjs
// proves (the C matrix is not in the file): a witness that breaks a
// constraint still gives evaluations, and only the proof's pairing check
// then tells (the prover runs it).
//
// Immutable after from(); evaluate() may run from several threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/proving_key.hpp"
#include "kernels/constraint_rows.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

class ConstraintMatrices {
 public:
  // Refuses a bellman key (its prover hands a, b, c itself), entries out of
  // range, naming the entry, circuits of 2^30 wires or more, and a matrix
  // of 2^32 words or more.
  static Result<ConstraintMatrices> from(const ProvingKey& key);

  // a[i], b[i] = row i of A w, B w; c[i] = a[i] b[i]; every span n long
  // (rows without entries give 0). `w` holds num_vars values, Montgomery
  // form. threads == 0: the hardware's.
  Error evaluate(std::span<const kernels::Fr> w, std::span<kernels::Fr> a, std::span<kernels::Fr> b,
                 std::span<kernels::Fr> c, unsigned threads = 0) const;

  // Rows [begin, end) only, into a, b, c (n entries each) at their places in
  // `order`: one share of a producer's work (kernels::cpu::
  // evaluate_constraint_rows). `w` is not checked here: evaluate() says what
  // it needs.
  using Order = kernels::RowOrder;
  void evaluate_rows(std::span<const kernels::Fr> w, std::size_t begin, std::size_t end,
                     kernels::Fr* a, kernels::Fr* b, kernels::Fr* c, Order order) const;

  // The rows as one block of bytes, as a device holds them: A's offsets,
  // A's words, B's offsets, B's words, 32-bit words each, at these byte
  // offsets from the block's start.
  struct Image {
    std::size_t a_begin = 0, a_words = 0, b_begin = 0, b_words = 0, bytes = 0;
    kernels::ConstraintRows a(const std::byte* base) const { return at(base, a_begin, a_words); }
    kernels::ConstraintRows b(const std::byte* base) const { return at(base, b_begin, b_words); }

   private:
    static kernels::ConstraintRows at(const std::byte* base, std::size_t begin, std::size_t words) {
      return {reinterpret_cast<const std::uint32_t*>(base + begin),
              reinterpret_cast<const std::uint32_t*>(base + words)};
    }
  };
  Image image() const;
  // Bytes [offset, offset + out.size()) of the image into `out`; bytes past
  // its end are zero.
  void copy_image(std::size_t offset, std::span<std::byte> out) const;

  std::size_t rows() const { return rows_; }
  std::size_t wires() const { return wires_; }

 private:
  // One matrix's rows in kernels::ConstraintRows's form.
  struct Rows {
    std::vector<std::uint32_t> begin;  // rows + 1 offsets into `words`
    std::vector<std::uint32_t> words;
    kernels::ConstraintRows view() const { return {begin.data(), words.data()}; }
  };
  // Fills a_ and b_ from entries already checked (rows_, wires_ set); an
  // error if a matrix would hold 2^32 words or more.
  Error build(std::span<const MatrixEntry> entries);
  std::size_t rows_ = 0, wires_ = 0;
  Rows a_, b_;
};

}  // namespace stoker::engine::groth16

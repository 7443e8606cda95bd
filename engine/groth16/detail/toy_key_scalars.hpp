// What the points of a toy key (toy_key.hpp) are multiples of: the wires'
// polynomials u, v, w at tau from the Lagrange basis of the domain, and
// from them every query's scalars, on `threads` threads.
//
// Every loop is cut into ranges that start from their own power of a root
// or of tau and invert their own denominators (one inversion per 2^14
// elements), and the matrices' columns are summed by ranges of wires, each
// thread reading every term and keeping those of its wires: field sums and
// products are exact, so the scalars are the same on any number of threads.
// std::bad_alloc is the only exception.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "engine/groth16/proving_key.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"

namespace stoker::engine::groth16::detail {

// out[t.signal] += t.value * at_row[t.row] for every term of m: the
// matrix's columns at a point, at_row being the Lagrange basis there.
void add_columns(std::vector<kernels::Fr>& out, const std::vector<R1csTerm>& m,
                 const std::vector<kernels::Fr>& at_row, unsigned threads);
// out[t.row] += t.value * w[t.signal] for every term of m: the matrix times
// a witness.
void add_rows(std::span<kernels::Fr> out, const std::vector<R1csTerm>& m,
              std::span<const kernels::Fr> w, unsigned threads);

// Which wires have a point in a matrix's query (the density bits).
std::vector<bool> appears(const std::vector<R1csTerm>& m, std::size_t first, std::size_t count);

// The wires with an A and a B query: every wire in snarkjs's keys; in
// bellman's the public ones (A) and those that appear in the matrix.
struct ToyKeyQueries {
  std::vector<bool> a_aux, b_in, b_aux;
  std::size_t a = 0, b = 0;  // how many
  ToyKeyQueries(const R1cs& cs, KeyFormat format);
};

struct ToyKeyScalars {
  // (beta u + alpha v + w) / gamma for the public wires (IC), / delta for
  // the private ones (L): one per wire.
  std::vector<kernels::Fr> ic_l;
  std::vector<kernels::Fr> a, b;  // u and v of the wires of the A and B queries
  std::vector<kernels::Fr> h;     // the H query's, in the format's basis
};

// Host bytes toy_key_scalars holds at its peak for a domain of n points:
// three scalars per wire and n more (first the Lagrange basis, then the H
// query's scalars), and what it returns holds no more than that.
std::size_t toy_key_scalars_bytes(std::size_t num_vars, std::size_t n);

ToyKeyScalars toy_key_scalars(const R1cs& cs, const ToySecrets& sec, KeyFormat format,
                              unsigned log_n, const ToyKeyQueries& q, unsigned threads);

}  // namespace stoker::engine::groth16::detail

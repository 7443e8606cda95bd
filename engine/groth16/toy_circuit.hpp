// A rank-1 constraint system and a circuit made up for tests and
// benchmarks, with a witness that satisfies it. TESTING ONLY: nothing is
// proved about anything real.
//
// The circuit has the shape that matters to a prover: wire 0 is the
// constant 1, then the public wires, then private ones; each public wire is
// bound by one constraint (p * 1 = p); every other constraint is a
// multiplication gate z = x * y over earlier wires (now and then with a
// second term and a coefficient), and the private inputs are 0 or 1 as
// often as `zeros` and `ones` say, as bit decompositions make them in real
// circuits, so that most witness values are 0 or 1 too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/groth16/witness_values.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

// One term of a constraint: row `row` of the matrix takes value * w[signal].
struct R1csTerm {
  std::uint32_t row = 0;
  std::uint32_t signal = 0;
  kernels::Fr value;  // Montgomery form
};

// (A w) * (B w) = (C w), row by row, for rows < num_constraints.
struct R1cs {
  std::size_t num_vars = 0;    // wire 0 (the constant 1) included
  std::size_t num_public = 0;  // public wires after wire 0
  std::size_t num_constraints = 0;
  std::vector<R1csTerm> a, b, c;
};

struct ToyCircuitShape {
  std::size_t constraints = 0;  // at least num_public + 1
  std::size_t num_public = 1;
  double zeros = 0.4, ones = 0.5;  // the private inputs' mix; the rest are full-size values
  // The share of the private wires a gate's B operand is drawn from (1:
  // any earlier wire), which sets the B query's density (bellman keys).
  double b_share = 1.0;
  // Every private wire also bound by a row of its own (w * 1 = w), as the
  // linear constraints of real circuits do: the A query then covers every
  // wire. The gates get the rows left.
  bool bind_every_wire = false;
  // The gates' outputs in the inputs' mix of zeros, ones and full-size
  // values (each gate's operands picked by value), so that the whole
  // witness has it; otherwise products of mostly 0 and 1 drift to 0 (about
  // 74 % zeros and 16 % ones from inputs of 40 % and 50 %).
  bool keep_mix = false;
};

// Filecoin's 32 GiB PoRep's shape in a domain of 2^log_n points: 328
// public inputs, A over every wire, B over about a quarter of them (25.4 %
// in supraseal-c2's measured key), the witness 40 % zeros and 50 % ones.
ToyCircuitShape porep_shape(unsigned log_n);

// What make_toy_circuit makes for a shape at most: its wires and each
// matrix's terms (one gate in eight draws a second A term; room for eight
// standard deviations of that draw). It reserves these, so its vectors hold
// no more than this (a vector grown by doubling holds up to twice its
// terms: 9 GB more at 2^26, and the copies took half the circuit's time).
struct ToyCircuitCounts {
  std::size_t vars = 0;
  std::size_t a_terms = 0, b_terms = 0, c_terms = 0;
  std::size_t bytes() const;  // the witness's and the terms' memory
};
ToyCircuitCounts toy_circuit_counts(const ToyCircuitShape& shape);

struct ToyCircuit {
  R1cs r1cs;
  WitnessValues witness;  // num_vars values, Montgomery form, witness[0] = 1
};

// Deterministic for a seed (and made in time linear in the constraints).
ToyCircuit make_toy_circuit(const ToyCircuitShape& shape, std::uint64_t seed);

// Whether `w` satisfies every constraint of `r1cs`.
bool is_satisfied(const R1cs& r1cs, std::span<const kernels::Fr> w);

}  // namespace stoker::engine::groth16

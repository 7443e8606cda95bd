// What a bellperson synthesis hands a Groth16 GPU prover for one circuit
// (supraseal-c2 takes the same from Rust): the evaluations of a, b and c on
// the domain (n each, zeros past the last constraint), the input and aux
// assignments (inputs[0] = 1), and which wires appear in A and B, one bit
// per wire of each kind. A bellman key's A query holds the inputs and the
// aux wires whose A bit is set, its B queries the wires whose B bits are.
//
// BellmanAssignment views the data (spans the caller keeps alive);
// BellmanWitness owns it, as the witness file (bellman_witness_file.hpp)
// and the toy circuits give it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "engine/groth16/witness_values.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

struct BellmanAssignment {
  std::span<const kernels::Fr> a, b, c;
  std::span<const kernels::Fr> inputs, aux;
  std::vector<bool> a_aux_density, b_input_density, b_aux_density;
};

struct BellmanWitness {
  WitnessValues a, b, c, inputs, aux;  // Montgomery form
  std::vector<bool> a_aux_density, b_input_density, b_aux_density;

  BellmanAssignment view() const {
    return BellmanAssignment{a, b, c, inputs, aux, a_aux_density, b_input_density, b_aux_density};
  }
};

// The scalars of the A and B queries of a bellman key, in the queries'
// order: A takes every input, then the aux wires whose A bit is set; B the
// inputs and then the aux wires whose B bits are set. (L takes every aux
// wire, H the h coefficients.)
struct BellmanQueryScalars {
  WitnessValues a, b;
};

// Counted first and written once into buffers of their exact size: at
// 2^24 the A scalars are 671 MB, which vectors grown by push_back copied
// about twice more, page by page.
inline BellmanQueryScalars query_scalars(const BellmanAssignment& in) {
  const auto a_bit = [&](std::size_t i) {
    return i < in.a_aux_density.size() && in.a_aux_density[i];
  };
  const auto b_bit = [&](std::size_t i) {
    return i < in.b_aux_density.size() && in.b_aux_density[i];
  };
  const std::size_t b_inputs = std::min(in.inputs.size(), in.b_input_density.size());
  std::size_t a_count = in.inputs.size(), b_count = 0;
  for (std::size_t i = 0; i < b_inputs; ++i) b_count += in.b_input_density[i];
  for (std::size_t i = 0; i < in.aux.size(); ++i) {
    a_count += a_bit(i);
    b_count += b_bit(i);
  }
  BellmanQueryScalars out;
  out.a.resize(a_count);
  out.b.resize(b_count);
  std::size_t a = 0, b = 0;
  for (std::size_t i = 0; i < in.inputs.size(); ++i) out.a[a++] = in.inputs[i];
  for (std::size_t i = 0; i < b_inputs; ++i)
    if (in.b_input_density[i]) out.b[b++] = in.inputs[i];
  for (std::size_t i = 0; i < in.aux.size(); ++i) {
    if (a_bit(i)) out.a[a++] = in.aux[i];
    if (b_bit(i)) out.b[b++] = in.aux[i];
  }
  return out;
}

}  // namespace stoker::engine::groth16

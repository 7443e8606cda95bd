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
  std::vector<kernels::Fr> a, b;
};

inline BellmanQueryScalars query_scalars(const BellmanAssignment& in) {
  BellmanQueryScalars out;
  out.a.assign(in.inputs.begin(), in.inputs.end());
  for (std::size_t i = 0; i < in.inputs.size() && i < in.b_input_density.size(); ++i)
    if (in.b_input_density[i]) out.b.push_back(in.inputs[i]);
  for (std::size_t i = 0; i < in.aux.size(); ++i) {
    if (i < in.a_aux_density.size() && in.a_aux_density[i]) out.a.push_back(in.aux[i]);
    if (i < in.b_aux_density.size() && in.b_aux_density[i]) out.b.push_back(in.aux[i]);
  }
  return out;
}

}  // namespace stoker::engine::groth16

// `stoker bench prove`: whole Groth16 proofs through the engine, as a
// prover's user runs them: a toy key (testing only) of 2^K points made and
// loaded on every device once, then jobs of --partitions proofs of one
// witness, a warm-up and --reps timed jobs. For each size: the key's shape
// (wires, public inputs, the A and B queries' densities), its load, the
// wall per proof in the steady job (its wall over its proofs), the
// pipeline's bound per proof (DESIGN.md's model over the job's measured
// stages), the device's busy fraction, each kernel step's median (h and
// the five MSMs), the assembly and check of a proof on a CPU worker, and
// supraseal-c2's figures on one H200 where they were measured.
//
// --shape porep makes the circuit Filecoin's 32 GiB PoRep's shape: 328
// public inputs, A over nearly every wire, B over about a quarter of them,
// the witness 40 % zeros and 50 % ones.
#pragma once

namespace stoker::tools {

// argv[0] is "prove". 0 on success, 1 when a measurement failed, 2 for bad usage.
int bench_prove_command(int argc, char** argv);

}  // namespace stoker::tools

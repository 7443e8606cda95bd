// bellman / bellperson Groth16 parameters (.params, Filecoin's proving
// keys): read into the one internal form (proving_key.hpp, format
// bellman), and written for toy keys. docs/GROTH16_FILES.md section
// 4 has the layout: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1,
// delta_g2, then IC, H, L, A, B_G1 and B_G2, each a u32 big-endian count
// and that many uncompressed zcash-encoded points; no header, no padding.
//
// The key's shape comes from the counts: n = H count + 1 (a power of
// two), num_public = IC count - 1, num_vars = IC count + L count. A holds
// at most num_vars points and B_G1 and B_G2 the same number, at most
// num_vars (bellman drops the points at infinity: which wires they belong
// to comes with the witness as density bits, not from the file).
//
// Reading refuses, naming the file, the vector and the byte offset: a
// count past the end of the file or bytes after B_G2, counts that break
// the rules above, a point with bad flags or a coordinate not below q, a
// G2 point off its curve (decoding checks it), and unless the caller
// trusts the file, any point off its curve or outside its subgroup. The
// files run to about 47 GB: points are read in large batches and decoded
// on `threads` threads. No exception escapes; thread safe.
#pragma once

#include <memory>
#include <string>

#include "common/error.hpp"
#include "engine/groth16/key_file.hpp"
#include "engine/groth16/point_check.hpp"
#include "engine/groth16/proving_key.hpp"

namespace stoker::engine::groth16 {

// threads == 0: the hardware's.
Result<ProvingKey> read_params(const std::string& path, PointCheck check = PointCheck::full,
                               unsigned threads = 0);

// The file opened for a load onto devices (key_file.hpp): the head's points
// and IC read (their encoding and coordinates checked; curve and subgroup
// are the load's), every count and the file's size checked as read_params
// checks them, the queries' points left in the file.
Result<std::unique_ptr<KeyFile>> open_params(const std::string& path, unsigned threads = 0);

// The verifying key alone (the header's points and IC, checked as above):
// what a verifier reads of a file that may run to tens of gigabytes.
Result<VerifyingKey> read_params_verifying_key(const std::string& path,
                                               PointCheck check = PointCheck::full,
                                               unsigned threads = 0);

// Writes a key of format bellman. Errors: counts that break the rules
// above, a snarkjs-format key (its H is another basis), the file cannot be
// written (nothing is left behind).
Error write_params(const std::string& path, const ProvingKey& key);

}  // namespace stoker::engine::groth16

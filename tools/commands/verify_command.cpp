// `stoker verify`; see verify_command.hpp.
#include "tools/commands/verify_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "common/elapsed.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/commands/public_inputs_file.hpp"

namespace stoker::tools {
namespace {

namespace g16 = engine::groth16;

constexpr const char* kHelp =
    "usage: stoker verify --vk FILE --proof FILE --public FILE\n"
    "       stoker verify --params P --proof-bytes FILE --inputs FILE\n"
    "\n"
    "Checks a Groth16 proof over BLS12-381, in snarkjs's files:\n"
    "  --vk FILE          verification_key.json (`snarkjs zkey export verificationkey`)\n"
    "  --proof FILE       proof.json\n"
    "  --public FILE      public.json: the public signals, decimal strings below r\n"
    "or in bellman's:\n"
    "  --params P         the parameters file the proof was made with (its verifying key)\n"
    "  --proof-bytes F    the proof's 192 bytes (A, B, C compressed)\n"
    "  --inputs F         the public inputs after the constant 1, 32 bytes each,\n"
    "                     little-endian, below r\n"
    "  --proof F          instead of --proof-bytes: the proof as snarkjs's proof.json\n"
    "\n"
    "Every point is checked on its curve and in its subgroup, every value below its\n"
    "modulus, z coordinates 0 or 1, and the count of public inputs against the key;\n"
    "then e(A, B) = e(alpha, beta) e(IC, gamma) e(C, delta) as one product of pairings.\n"
    "Exit status: 0 valid, 1 invalid or a malformed file (one line says which and\n"
    "why), 2 a usage error.\n";

Result<g16::Proof> read_proof_bytes(const std::string& path) {
  // The size first: a file of gigabytes is no proof, and is not read.
  const auto size = input_size(path);
  if (!size) return size.error();
  if (*size != g16::kProofBytes)
    return Error{Errc::invalid_argument, path + ": " + std::to_string(*size) +
                                             " bytes; a proof has " +
                                             std::to_string(g16::kProofBytes)};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{Errc::io_error, path + ": cannot open"};
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  if (bytes.size() != g16::kProofBytes)
    return Error{Errc::io_error, path + ": " + std::to_string(bytes.size()) +
                                     " bytes read; a proof has " +
                                     std::to_string(g16::kProofBytes)};
  auto proof = g16::decode_proof_bytes(std::span<const unsigned char, g16::kProofBytes>(
      reinterpret_cast<const unsigned char*>(bytes.data()), g16::kProofBytes));
  if (!proof) return Error{proof.error().code, path + ": " + proof.error().what()};
  return proof;
}

int verify(int argc, char** argv) {
  CommandLine cl("verify", kHelp);
  std::string vk_path, proof_path, public_path, params_path, proof_bytes_path, inputs_path;
  cl.value("--vk", vk_path);
  cl.value("--proof", proof_path);
  cl.value("--public", public_path);
  cl.value("--params", params_path);
  cl.value("--proof-bytes", proof_bytes_path);
  cl.value("--inputs", inputs_path);
  cl.exclusive({"--vk", "--params"});
  cl.exclusive({"--proof", "--proof-bytes"});
  cl.exclusive({"--public", "--inputs"});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (vk_path.empty() && params_path.empty())
    return cl.usage_error("a key is required: --vk (snarkjs) or --params (bellman)");
  if (proof_path.empty() && proof_bytes_path.empty())
    return cl.usage_error("a proof is required: --proof or --proof-bytes");
  if (public_path.empty() && inputs_path.empty())
    return cl.usage_error("public inputs are required: --public or --inputs");
  for (const auto& in :
       {vk_path, params_path, proof_path, proof_bytes_path, public_path, inputs_path})
    if (!in.empty())
      if (auto size = input_size(in); !size) return cl.usage_error(size.error().what());

  const auto start = std::chrono::steady_clock::now();
  Result<g16::VerifyingKey> vk = Error{};
  if (!vk_path.empty()) {
    vk = g16::read_verification_key_json(vk_path);
  } else {
    vk = g16::read_params_verifying_key(params_path);
  }
  if (!vk) return cl.failure(vk.error().what());
  auto proof =
      proof_path.empty() ? read_proof_bytes(proof_bytes_path) : g16::read_proof_json(proof_path);
  if (!proof) return cl.failure(proof.error().what());
  auto inputs =
      public_path.empty() ? read_public_inputs(inputs_path) : g16::read_public_json(public_path);
  if (!inputs) return cl.failure(inputs.error().what());
  if (auto e = g16::verify(*vk, *proof, *inputs)) return cl.failure(e.what());
  const std::string proof_name = proof_path.empty() ? proof_bytes_path : proof_path;
  std::printf("valid: %s for %zu public input%s (checked in %.1f ms)\n", proof_name.c_str(),
              inputs->size(), inputs->size() == 1 ? "" : "s", common::seconds_since(start) * 1e3);
  return 0;
}

}  // namespace

int verify_command(int argc, char** argv) {
  return with_memory_guard("verify", [&] { return verify(argc, argv); });
}

}  // namespace stoker::tools

// `stoker keys`; see keys_command.hpp.
#include "tools/commands/keys_command.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "engine/groth16/bellman_witness_file.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_batch.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/commands/keys_server_command.hpp"

namespace stoker::tools {
namespace {

namespace g16 = engine::groth16;

std::string keys_help() {
  return std::string(
             "usage: stoker keys generate --log-n K --seed S (--zkey K --wtns W | --params P "
             "--witness W)\n") +
         kKeysServerSynopsis +
         "\n"
         "subcommands (each has --help):\n"
         "  generate   a toy proving key and witness (testing only)\n" +
         kKeysServerSubcommands;
}

constexpr const char* kGenerateHelp =
    "usage: stoker keys generate --log-n K --seed S --zkey FILE --wtns FILE [options]\n"
    "       stoker keys generate --log-n K --seed S --params FILE --witness FILE [options]\n"
    "\n"
    "Writes a TOY Groth16 proving key for a made-up circuit that fills a domain of\n"
    "2^K points, and a witness that satisfies it, for tests and benchmarks. The key's\n"
    "secrets (tau, alpha, beta, gamma, delta) derive from the seed: anyone who knows\n"
    "the seed can forge proofs. NEVER use it in production.\n"
    "  --log-n K      the domain has 2^K points, K in 2..26; the circuit has\n"
    "                 2^K - N - 1 constraints (N bind the public inputs, the rest\n"
    "                 are gates), most witness values 0 or 1. At 2^26\n"
    "                 the key and its circuit take about 73 GB of host memory\n"
    "                 (checked before anything is made); the .zkey is about 53 GB,\n"
    "                 the .params 30 GB\n"
    "  --seed S       the seed of the secrets and the circuit (a 64-bit integer)\n"
    "  --public N     public inputs (default 1), at most 2^(K-1) - 1: each takes a\n"
    "                 constraint and a row of the domain, and one gate at least is left\n"
    "  --threads N    CPU threads (default: all)\n"
    "  --cpu          the key's points on the CPU even where GPUs exist\n"
    "  --device N     the key's points on this GPU only (CUDA's numbering;\n"
    "                 default: every GPU, each a share of every query)\n"
    "snarkjs's format:\n"
    "  --zkey FILE    the proving key; `stoker prove` and `snarkjs groth16 prove` take it\n"
    "  --wtns FILE    the witness\n"
    "  --vk FILE      also the verifying key as snarkjs's verification_key.json\n"
    "bellman's format:\n"
    "  --params FILE  the parameters file, as bellperson writes it\n"
    "  --witness FILE what bellperson's synthesis gives a prover (`stoker prove --witness`)\n"
    "The key is the same, byte for byte, on GPUs or the CPU. Prints one line:\n"
    "the circuit, the files, seconds and where the points were made.\n";

int generate(int argc, char** argv) {
  CommandLine cl("keys generate", kGenerateHelp);
  std::optional<unsigned> log_n;
  std::optional<std::uint64_t> seed;
  std::size_t num_public = 1;
  unsigned threads = 0;
  bool cpu = false;
  std::optional<int> device;
  std::string zkey_path, wtns_path, vk_path, params_path, witness_path;
  cl.number("--log-n", log_n, 2u, 26u);
  cl.number("--seed", seed);
  cl.number("--public", num_public, std::size_t{1}, std::size_t{1} << 16);
  cl.number("--threads", threads, 1u, 4096u);
  cl.flag("--cpu", cpu);
  cl.gpu("--device", device);
  cl.exclusive({"--cpu", "--device"});
  cl.value("--zkey", zkey_path);
  cl.value("--wtns", wtns_path);
  cl.value("--vk", vk_path);
  cl.value("--params", params_path);
  cl.value("--witness", witness_path);
  for (const char* z : {"--zkey", "--wtns", "--vk"})
    for (const char* b : {"--params", "--witness"}) cl.exclusive({z, b});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (!log_n) return cl.usage_error("--log-n is required");
  if (!seed) return cl.usage_error("--seed is required");
  const bool bellman = !params_path.empty() || !witness_path.empty();
  if (bellman && (params_path.empty() || witness_path.empty()))
    return cl.usage_error("bellman's format takes --params and --witness");
  if (!bellman && (zkey_path.empty() || wtns_path.empty()))
    return cl.usage_error("--zkey and --wtns are required (or --params and --witness)");
  const std::size_t n = std::size_t{1} << *log_n;
  // The domain holds the circuit's 2^K - N - 1 constraints, N of them one
  // per public input and the rest gates, and N + 1 rows that bind the
  // public inputs and the constant 1: 2N + 2 + gates <= 2^K, a gate at least.
  if (const std::size_t most = n / 2 - 1; num_public > most)
    return cl.usage_error("--public " + std::to_string(num_public) +
                          " leaves no room for a gate in 2^" + std::to_string(*log_n) +
                          " points (each public input takes a constraint and a row): at most " +
                          std::to_string(most) + " with --log-n " + std::to_string(*log_n));
  auto outs = check_outputs({{"--zkey", zkey_path},
                             {"--wtns", wtns_path},
                             {"--vk", vk_path},
                             {"--params", params_path},
                             {"--witness", witness_path}},
                            {});
  if (!outs) return cl.usage_error(outs.error().what());

  g16::ToyKeyOptions options;
  options.log_n = *log_n;
  options.threads = threads;
  if (device)
    options.cuda_ordinals = {*device};
  else if (!cpu)
    for (int d = 0; d < devices::cuda_device_count(); ++d) options.cuda_ordinals.push_back(d);
  const auto format = bellman ? g16::KeyFormat::bellman : g16::KeyFormat::snarkjs;
  const g16::ToyCircuitShape shape{.constraints = n - num_public - 1, .num_public = num_public};
  if (Error e = common::check_host_memory(
          "a toy key of 2^" + std::to_string(*log_n) + " points with its circuit",
          g16::toy_setup_host_bytes(shape, format, *log_n, options.cuda_ordinals.size())))
    return cl.failure(e.what());

  const auto start = std::chrono::steady_clock::now();
  const auto circuit = g16::make_toy_circuit(shape, *seed);
  auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(*seed), format, options);
  if (!key) return cl.failure(key.error().what());
  // Every file to a temporary first, renamed only once all are written: a
  // failure or a signal leaves every output as it was.
  OutputBatch batch;
  const auto out = [&](const char* option) -> const OutputFile& { return *output(*outs, option); };
  if (bellman) {
    if (Error e = batch.add(out("--params"),
                            [&](const std::string& p) { return g16::write_params(p, *key); }))
      return cl.failure(e.what());
    const auto witness = g16::synthesize_bellman(circuit.r1cs, circuit.witness, *log_n, threads);
    if (Error e = batch.add(out("--witness"), [&](const std::string& p) {
          return g16::write_bellman_witness(p, witness);
        }))
      return cl.failure(e.what());
  } else {
    if (Error e = batch.add(out("--zkey"),
                            [&](const std::string& p) { return g16::write_zkey(p, *key); }))
      return cl.failure(e.what());
    if (Error e = batch.add(out("--wtns"), [&](const std::string& p) {
          return g16::write_wtns(p, circuit.witness);
        }))
      return cl.failure(e.what());
    if (const auto* vk = output(*outs, "--vk"))
      if (Error e = batch.add(*vk, g16::verification_key_json(key->vk)))
        return cl.failure(e.what());
  }
  if (Error e = batch.commit()) return cl.failure(e.what());
  std::string files;
  for (const auto& [option, file] : *outs) files += (files.empty() ? "" : " and ") + file.path();
  const std::size_t gpus = options.cuda_ordinals.size();
  const std::string where = gpus == 0   ? "the CPU"
                            : gpus == 1 ? "GPU " + std::to_string(options.cuda_ordinals[0])
                                        : std::to_string(gpus) + " GPUs";
  std::printf(
      "toy %s key (testing only) for 2^%u points: %zu constraints, %zu wires, %zu public; "
      "%s written in %.2f s, the points made on %s\n",
      bellman ? "bellman" : "snarkjs", *log_n, circuit.r1cs.num_constraints, circuit.r1cs.num_vars,
      num_public, files.c_str(), common::seconds_since(start), where.c_str());
  return 0;
}

}  // namespace

int keys_command(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "stoker keys: a subcommand is required\n%s", keys_help().c_str());
    return 2;
  }
  const std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") {
    std::fputs(keys_help().c_str(), stdout);
    return 0;
  }
  if (sub == "generate")
    return with_memory_guard("keys generate", [&] { return generate(argc - 1, argv + 1); });
  if (sub == "load") return keys_load_command(argc - 1, argv + 1);
  if (sub == "list") return keys_list_command(argc - 1, argv + 1);
  if (sub == "evict") return keys_evict_command(argc - 1, argv + 1);
  std::fprintf(stderr, "stoker keys: unknown subcommand '%s'\n%s", argv[1], keys_help().c_str());
  return 2;
}

}  // namespace stoker::tools

// groth16 as a registered workload: a key from a file (a snarkjs .zkey or a
// bellman .params with its witness) or a toy key of the size asked for
// (testing only), loaded on the engine's devices, and one proof per
// partition of the same witness, each checked with the pairing.
#include <chrono>
#include <optional>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "engine/groth16/bellman_witness_file.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "engine/workloads/build_limits.hpp"
#include "engine/workloads/builtin/builtin_workloads.hpp"
#include "engine/workloads/builtin/shared.hpp"
#include "engine/workloads/groth16_key_check_once.hpp"
#include "engine/workloads/groth16_workload.hpp"

namespace stoker::engine::workloads::builtin {
namespace {

namespace g16 = groth16;

// 2^26: a key of 46.7 GB of points, 77 GB of host memory at its peak with
// its circuit (engine/groth16/toy_key.hpp), its points made on the
// engine's GPUs; the memory check refuses it, naming the need and the
// limit, where the host lacks the memory.
constexpr unsigned kToyMinLogN = 2, kToyMaxLogN = 26;

std::string hex(std::span<const unsigned char> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (auto b : bytes) text += {digits[b >> 4], digits[b & 15]};
  return text;
}

Workload::Description groth16_description() {
  Workload::Description d;
  d.name = "groth16";
  d.summary =
      "whole Groth16 proofs over a key resident on every device, one proof of the witness per "
      "partition";
  d.partitions_default = "4 per GPU, 8 on the host backend";
  d.verification = "every proof passes the pairing check of the key's verifying key";
  d.options = {
      WorkloadOption::text("zkey", "FILE", "a snarkjs proving key (.zkey); with --wtns"),
      WorkloadOption::text("wtns", "FILE", "the witness every partition proves (.wtns)"),
      WorkloadOption::text("params", "FILE",
                           "a bellman proving key (.params); with --witness. Either key's points "
                           "are checked once per file (the record of `stoker prove --help`)"),
      WorkloadOption::text("witness", "FILE",
                           "the bellman witness every partition proves (`stoker prove --help`)"),
      WorkloadOption::integer("log-n", "K", kToyMinLogN, kToyMaxLogN, "",
                              "without a key file: a toy key (testing only) of 2^K points, K in " +
                                  std::to_string(kToyMinLogN) + ".." + std::to_string(kToyMaxLogN) +
                                  " (default: 16 on GPUs, 8 on the host backend)"),
      WorkloadOption::choice("key-format", "F", {"zkey", "bellman"}, "zkey",
                             "the toy key's format"),
      WorkloadOption::integer("public", "N", 1, 1 << 16, "1", "the toy circuit's public inputs"),
  };
  d.exclusive = {{"zkey", "params"}, {"zkey", "log-n"}, {"params", "log-n"}};
  return d;
}

struct LoadedKey {
  // A key from a file stays there until its load reads its points straight
  // into the pinned blocks (file); a toy key is made in memory (key).
  std::unique_ptr<g16::KeyFile> file;
  std::shared_ptr<const g16::ProvingKey> key;
  std::shared_ptr<const g16::WitnessValues> witness;
  std::shared_ptr<const g16::BellmanWitness> bellman;
  std::string source;
  double read_s = 0;
  // A key from a file: its points checked on curve and group as they reach
  // the devices (the reader checks only their coordinates' range).
  bool check_points = false;
};

Result<LoadedKey> key_for(const Engine& engine, const WorkloadRequest& request,
                          const WorkloadValues& values) {
  const auto start = std::chrono::steady_clock::now();
  LoadedKey out;
  if (auto zkey = values.text("zkey")) {
    const auto wtns = values.text("wtns");
    if (!wtns) return Error{Errc::invalid_argument, "groth16: --zkey needs --wtns"};
    auto file = g16::open_zkey(*zkey);
    if (!file) return file.error();
    auto w = g16::read_wtns(*wtns);
    if (!w) return w.error();
    out.file = std::move(*file);
    out.witness = std::make_shared<const g16::WitnessValues>(std::move(*w));
    out.source = *zkey;
    out.check_points = true;
  } else if (auto params = values.text("params")) {
    const auto witness = values.text("witness");
    if (!witness) return Error{Errc::invalid_argument, "groth16: --params needs --witness"};
    auto file = g16::open_params(*params);
    if (!file) return file.error();
    auto w = g16::read_bellman_witness(*witness);
    if (!w) return w.error();
    out.file = std::move(*file);
    out.bellman = std::make_shared<const g16::BellmanWitness>(std::move(*w));
    out.source = *params;
    out.check_points = true;
  } else {
    if (values.given("wtns") || values.given("witness"))
      return Error{Errc::invalid_argument, "groth16: a witness file goes with a key file"};
    const unsigned log_n = values.number<unsigned>("log-n").value_or(on_gpus(engine) ? 16 : 8);
    const auto num_public = *values.number<std::size_t>("public");
    const std::size_t n = std::size_t{1} << log_n;
    if (num_public + 2 > n)
      return Error{Errc::invalid_argument, "groth16: --public " + std::to_string(num_public) +
                                               " leaves no constraint in 2^" +
                                               std::to_string(log_n) + " points"};
    const bool bellman = values.text("key-format") == "bellman";
    const auto format = bellman ? g16::KeyFormat::bellman : g16::KeyFormat::snarkjs;
    // The points on every GPU of the engine, each a share of every query.
    g16::ToyKeyOptions options;
    options.log_n = log_n;
    if (on_gpus(engine))
      for (std::size_t d = 0; d < engine.devices().size(); ++d)
        options.cuda_ordinals.push_back(engine.devices()[d].info().ordinal);
    const g16::ToyCircuitShape shape{.constraints = n - num_public - 1, .num_public = num_public};
    if (Error e = common::check_host_memory(
            "a toy key of 2^" + std::to_string(log_n) + " points with its circuit",
            g16::toy_setup_host_bytes(shape, format, log_n, options.cuda_ordinals.size())))
      return e;
    auto circuit = g16::make_toy_circuit(shape, request.seed);
    auto key =
        g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(request.seed), format, options);
    if (!key) return key.error();
    if (bellman)
      out.bellman = std::make_shared<const g16::BellmanWitness>(
          g16::synthesize_bellman(circuit.r1cs, circuit.witness, log_n));
    else
      out.witness = std::make_shared<const g16::WitnessValues>(std::move(circuit.witness));
    out.key = std::make_shared<const g16::ProvingKey>(std::move(*key));
    out.source = "a toy key (testing only) from seed " + std::to_string(request.seed) +
                 (options.cuda_ordinals.empty()
                      ? ", made on the CPU"
                      : ", made on " + std::to_string(options.cuda_ordinals.size()) + " GPU(s)");
  }
  out.read_s = common::seconds_since(start);
  return out;
}

Result<WorkloadJob> make_groth16(Engine& engine, const WorkloadRequest& request,
                                 const WorkloadValues& values) {
  const std::size_t partitions = partitions_for(engine, request, 4);
  // Before the key is read or made: each partition holds at least its
  // bookkeeping, its witness's handle and its proof, whatever the key
  // (make_groth16_job checks the whole need once the key is known).
  BuildNeeds least;
  least.workload = "groth16";
  least.partitions = partitions;
  least.caller_bytes = kPartitionBookkeepingBytes + sizeof(g16::Proof) +
                       sizeof(std::shared_ptr<const g16::BellmanWitness>);
  if (Error e = check_build(least, {})) return e;
  auto loaded = key_for(engine, request, values);
  if (!loaded) return std::move(loaded).error();
  const auto load_start = std::chrono::steady_clock::now();
  const bool from_file = loaded->file != nullptr;
  // A key file is checked once per file: the user's record of checked keys
  // (as `stoker prove` keeps it) vouches for a file checked before.
  std::optional<g16::CheckedKeys> record;
  if (auto file = g16::CheckedKeys::user_file()) record.emplace(*file);
  std::string points = "made here";
  Result<Groth16Key> resident = Error{};
  if (loaded->file) {
    auto once = load_groth16_key_once(
        engine, *loaded->file, "groth16 key",
        {.check_points = loaded->check_points, .record = record ? &*record : nullptr});
    if (!once) return std::move(once).error();
    points = key_points_name(once->points);
    if (once->points == KeyPoints::checked_before)
      points += printf_text(", its digest in %.2f s", once->digest_s);
    else if (once->points == KeyPoints::checked && once->digest_s > 0)
      points += printf_text(", its digest taken in %.2f s", once->digest_s);
    if (!once->record_note.empty()) points += "; the record of checked keys: " + once->record_note;
    resident = std::move(once->key);
  } else {
    resident = load_groth16_key(engine, loaded->key, "groth16 key", loaded->check_points);
  }
  if (!resident) return std::move(resident).error();
  loaded->file.reset();
  loaded->key.reset();
  const double load_s = common::seconds_since(load_start);

  Groth16Options o = groth16_options_on(engine, *resident);
  for (std::size_t p = 0; p < partitions; ++p) {
    if (loaded->witness) o.witnesses.push_back(loaded->witness);
    if (loaded->bellman) o.bellman_witnesses.push_back(loaded->bellman);
  }
  o.verify = request.verify;
  const auto& key = *resident->key;
  o.name = "groth16-2^" + std::to_string(key.log_n);
  std::shared_ptr<Groth16Run> run;
  auto job = make_groth16_job(o, run);
  if (!job) return std::move(job).error();

  const bool snarkjs = key.format == g16::KeyFormat::snarkjs;
  WorkloadJob out;
  out.job = std::move(*job);
  out.run = run;
  out.banner = printf_text(
      "groth16, %zu partitions (a proof each) over 2^%u points (%s key, %zu wires, %zu public; %s) "
      "%s\n"
      "  key: %s, %s in %.2f s; %zu G1 and %zu G2 points%s (%.1f MiB) %s every device in %.2f s "
      "(points %s)\n",
      partitions, key.log_n, snarkjs ? "snarkjs" : "bellman", key.num_vars, key.num_public,
      o.verify ? "each checked with the pairing" : "not checked", on_devices(engine).c_str(),
      loaded->source.c_str(), from_file ? "opened" : "made", loaded->read_s, resident->g1_points(),
      resident->g2_points(), snarkjs ? " and the A and B rows" : "",
      static_cast<double>(resident->points.bytes()) / (1 << 20),
      from_file ? "read from it onto" : "on", load_s, points.c_str());
  out.verifies = o.verify;
  out.verification = "every proof passes the pairing check of the key's verifying key";
  out.all_verified = [run] {
    return run->options.verify &&
           std::all_of(run->proved.begin(), run->proved.end(), [](char p) { return p != 0; });
  };
  out.fields = [run](bool succeeded) {
    std::vector<std::string> proofs;
    if (succeeded)
      for (std::size_t p = 0; p < run->proofs.size(); ++p) {
        unsigned char bytes[g16::kProofBytes];
        g16::encode_proof_bytes(run->proofs[p], std::span<unsigned char, g16::kProofBytes>(bytes));
        proofs.push_back(hex(bytes));
      }
    const auto& k = *run->options.key.key;
    return std::vector<WorkloadField>{
        {"log_n", std::uint64_t{k.log_n}},
        {"format", std::string(k.format == g16::KeyFormat::snarkjs ? "snarkjs" : "bellman")},
        {"wires", std::uint64_t{k.num_vars}},
        {"public", std::uint64_t{k.num_public}},
        {"proofs", proofs}};
  };
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_groth16_workload() {
  return make_workload(groth16_description(), make_groth16);
}

}  // namespace stoker::engine::workloads::builtin

// `stoker prove`; see prove_command.hpp.
#include "tools/commands/prove_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/elapsed.hpp"
#include "devices/device_set.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/bellman_witness_file.hpp"
#include "engine/groth16/constraint_matrices.hpp"
#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/commands/proof_outputs.hpp"
#include "tools/commands/prove_on_engine.hpp"
#include "tools/commands/prove_server_command.hpp"

namespace stoker::tools {
namespace {

namespace g16 = engine::groth16;

constexpr const char* kHelp =
    "usage: stoker prove --zkey K --wtns W --proof FILE --public FILE [options]\n"
    "       stoker prove --params P --witness W --proof-bytes FILE [options]\n"
    "       stoker prove --server S --key NAME (--wtns W --proof FILE --public FILE |\n"
    "                    --witness W --proof-bytes FILE) [options]\n"
    "\n"
    "A Groth16 proof over BLS12-381, on a GPU where there is one (else on the CPU's\n"
    "threads), from:\n"
    "- a snarkjs proving key (circom circuits compiled with -p bls12381, snarkjs 0.7)\n"
    "  and a witness from circom's generator or `snarkjs wtns calculate`:\n"
    "  --zkey K         the proving key (.zkey)\n"
    "  --wtns W         the witness (.wtns), one value per wire of the key's circuit\n"
    "  --proof FILE     proof.json, as snarkjs writes it\n"
    "  --public FILE    public.json: the public signals, as snarkjs writes them\n"
    "- a bellman/bellperson key (.params, as Filecoin's) and what its synthesis gives:\n"
    "  --params P       the parameters file\n"
    "  --witness W      a, b, c, the assignments and density bits (the format is in\n"
    "                   engine/groth16/bellman_witness_file.hpp)\n"
    "  --proof-bytes F  the proof's 192 bytes: A, B, C compressed, as bellman writes it\n"
    "  --proof-json F   also the proof as snarkjs's proof.json\n"
    "  --inputs F       also the public inputs (the constant 1 left out), 32 bytes each,\n"
    "                   little-endian, as `stoker verify --inputs` reads them\n"
    "Either form:\n"
    "  --trust-key      skip the curve and subgroup checks of the key's points (for keys\n"
    "                   this machine made; coordinates are checked always)\n"
    "  --recheck-key    check the key's points even if its file was checked before\n"
    "On a GPU (or --backend host) a key file is checked once: its SHA-256 digest (one\n"
    "pass over the file) goes into this user's record of checked keys,\n"
    "$STOKER_CACHE_DIR/checked-keys (else $XDG_CACHE_HOME/stoker/ or ~/.cache/stoker/),\n"
    "and a file with a recorded digest loads with its points trusted.\n"
    "  --no-verify      skip the pairing check of the proof before it is written\n"
    "  --threads N      CPU threads (default: all)\n"
    "  --device N       the GPU to prove on (CUDA's numbering; default 0)\n"
    "  --cpu            prove on the CPU's threads even where a GPU exists\n"
    "  --backend host   prove through the engine's host backend: the GPU's path with\n"
    "                   the CPU's kernels (for tests on machines without a GPU)\n"
    "Through a daemon (`stoker serve`) that holds the key, with the witness and outputs\n"
    "of the key's form above (a bellman key's --proof-json and --inputs too):\n"
    "  --server S       the daemon: unix:PATH (its socket) or http://HOST:PORT\n"
    "  --key NAME       the key, loaded there by `stoker keys load`\n"
    "  --token-file F   for an http:// server: the file whose first line is the daemon's\n"
    "                   bearer token\n"
    "  --priority P     critical, high, normal (default) or low\n"
    "  --idempotency-key K  the same request sent again with K gets the first one's proof\n"
    "  --witness-by body|path  send the witness's bytes (default), or its absolute path\n"
    "                   for the daemon to read (under one of its --allow-dir)\n"
    "  --trust-key, --no-verify and --threads are the daemon's settings there (`stoker\n"
    "  serve --help`). An interrupt (Ctrl-C) while the proof waits or runs cancels it at\n"
    "  the daemon; nothing is written then.\n"
    "\n"
    "The proof's blinding scalars r and s come from the operating system's CSPRNG.\n"
    "A witness that does not satisfy the circuit fails the check and nothing is\n"
    "written. Prints one line: the circuit's size, where the time went, the files\n"
    "(through a daemon: the proof's id and the daemon's timings).\n";

struct Paths {
  std::string zkey, wtns, proof, public_, params, witness, proof_bytes, proof_json, inputs;
};

// Where a proof is made: the CPU prover, a GPU through the engine, or the
// engine's host backend.
struct Placement {
  enum class Kind { cpu, gpu, host_engine } kind = Kind::cpu;
  int device = 0;
  unsigned threads = 0;
  bool verify = true;
  // The key's points checked on curve and group: by the reader on the CPU
  // prover's path, as they reach the device on the engine's.
  bool check_points = true;
  // The engine's paths: the record of key files checked before, and
  // whether to check again regardless.
  const g16::CheckedKeys* checked_keys = nullptr;
  bool recheck_key = false;
  // How the key's reader checks its points: the engine checks them on the
  // device, where a GPU does in seconds what takes the CPU minutes.
  g16::PointCheck reader_check() const {
    return kind == Kind::cpu && check_points ? g16::PointCheck::full : g16::PointCheck::trusted;
  }
};

struct Proved {
  g16::Proof proof;
  bool uploaded = false;  // the key went onto a device first (the engine's path)
  double upload_s = 0, prove_s = 0;
  engine::workloads::KeyPoints points = engine::workloads::KeyPoints::checked;
  double digest_s = 0;
  std::string where;
};

// The key as each path takes it: the CPU prover's whole in memory, the
// engine's as its file, whose points go from it straight onto the device
// (no host copy of the whole key, each byte read once).
struct ProveKey {
  std::shared_ptr<const g16::ProvingKey> key;
  std::unique_ptr<g16::KeyFile> file;
  // The CPU prover's read: how it took the points.
  engine::workloads::KeyPoints points = engine::workloads::KeyPoints::checked;
  double digest_s = 0;
  const g16::ProvingKey& head() const { return file ? file->head() : *key; }
};

// The CPU's read checks every point as it reads (36.7 s for a 2^20 bellman
// key on two cores, against 2.6 s for the rest): with the record of checked
// keys, a file whose digest it holds is read with them trusted, and one
// checked here is added. The digest is taken through a descriptor of its
// own; the path must still name the file it digested once the read has
// ended (same device, inode, size and times), or the read fails.
template <typename Read>
Result<ProveKey> read_on_cpu(const Placement& at, const std::string& path, Read read) {
  namespace wl = engine::workloads;
  ProveKey out;
  g16::PointCheck check = at.reader_check();
  std::optional<g16::KeyDigest> digest;
  if (check == g16::PointCheck::full && at.checked_keys) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      auto found = at.checked_keys->look_up(fd, path, at.recheck_key, at.threads);
      ::close(fd);
      if (!found) return found.error();
      out.digest_s = found->digest_s;
      digest = found->digest;
      if (!found->note.empty())
        std::fprintf(stderr, "stoker prove: the record of checked keys: %s\n",
                     found->note.c_str());
      if (found->recorded) check = g16::PointCheck::trusted;
    }
  }
  auto key = read(check, at.threads);
  if (!key) return std::move(key).error();
  out.key = std::make_shared<const g16::ProvingKey>(std::move(*key));
  out.points = check == g16::PointCheck::full ? wl::KeyPoints::checked
               : digest                       ? wl::KeyPoints::checked_before
                                              : wl::KeyPoints::trusted;
  // Whether the path still names the file digested: same device, inode,
  // size and times.
  const auto still_digested = [&]() -> Result<bool> {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{Errc::io_error, path + ": cannot open"};
    auto now = g16::identity_of(fd, path);
    ::close(fd);
    if (!now) return now.error();
    return *now == digest->identity;
  };
  if (out.points == wl::KeyPoints::checked_before) {
    auto same = still_digested();
    if (!same) return same.error();
    if (!*same)
      return Error{Errc::io_error, path + ": the file changed while it was read: its points may "
                                          "not be the ones its digest names; prove again"};
  } else if (out.points == wl::KeyPoints::checked && digest) {
    // Recorded only if the checked bytes are the digested ones.
    auto same = still_digested();
    Error e = same && *same
                  ? at.checked_keys->add(*digest)
                  : Error{Errc::io_error, path + ": changed since its digest; not recorded"};
    if (e) std::fprintf(stderr, "stoker prove: the record of checked keys: %s\n", e.what().c_str());
  }
  return out;
}

template <typename Read, typename Open>
Result<ProveKey> key_for(const Placement& at, const std::string& path, Read read, Open open) {
  ProveKey out;
  if (at.kind == Placement::Kind::cpu) {
    return read_on_cpu(at, path, read);
  } else {
    auto file = open(at.threads);
    if (!file) return std::move(file).error();
    out.file = std::move(*file);
  }
  return out;
}

// Errors name the file at fault: the key's (its matrices, its points as
// they reach the device) or the witness's (its size, a broken constraint).
Result<Proved> prove_at(const Placement& at, ProveKey& key,
                        std::shared_ptr<const g16::WitnessValues> wtns,
                        std::shared_ptr<const g16::BellmanWitness> bellman,
                        const std::string& key_path, const std::string& witness_path) {
  const auto named = [](const std::string& file, const Error& e) {
    return Error{e.code, file + ": " + e.what()};
  };
  Proved out;
  if (at.kind == Placement::Kind::cpu) {
    auto randomness = g16::ProofRandomness::from_os();
    if (!randomness) return std::move(randomness).error();
    const auto start = std::chrono::steady_clock::now();
    const g16::CpuProverOptions options{.threads = at.threads, .verify = at.verify};
    Result<g16::Proof> proof = Error{};
    if (wtns) {
      auto matrices = g16::ConstraintMatrices::from(*key.key);
      if (!matrices) return named(key_path, matrices.error());
      proof = g16::prove_cpu(*key.key, *matrices, *wtns, *randomness, options);
    } else {
      proof = g16::prove_cpu(*key.key, bellman->view(), *randomness, options);
    }
    if (!proof) return named(witness_path, proof.error());
    out.proof = *proof;
    out.prove_s = common::seconds_since(start);
    out.where = "on the CPU";
    out.points = key.points;
    out.digest_s = key.digest_s;
    return out;
  }
  engine::Config config;
  const bool gpu = at.kind == Placement::Kind::gpu;
  config.devices.backend = gpu ? devices::BackendChoice::cuda : devices::BackendChoice::host;
  if (gpu) config.devices.cuda_ordinals = {at.device};
  boost::asio::io_context io;
  auto engine = engine::Engine::create(io.get_executor(), config);
  if (!engine) return std::move(engine).error();
  auto proved = prove_on_engine(**engine, io,
                                {.key = key.key,
                                 .file = key.file.get(),
                                 .witness = std::move(wtns),
                                 .bellman = std::move(bellman),
                                 .verify = at.verify,
                                 .check_points = at.check_points,
                                 .checked_keys = at.checked_keys,
                                 .recheck_key = at.recheck_key,
                                 .cpu_threads = at.threads,
                                 .key_name = key_path,
                                 .witness_name = witness_path});
  if (!proved) return std::move(proved).error();
  out.proof = proved->proof;
  out.uploaded = true;
  out.upload_s = proved->upload_s;
  out.points = proved->points;
  out.digest_s = proved->digest_s;
  if (!proved->record_note.empty())
    std::fprintf(stderr, "stoker prove: the record of checked keys: %s\n",
                 proved->record_note.c_str());
  out.prove_s = proved->prove_s;
  out.where =
      gpu ? "on GPU " + std::to_string(at.device) + " (" + (*engine)->devices()[0].info().name + ")"
          : "on the engine's host backend";
  return out;
}

int report(const g16::ProvingKey& key, double load_s, const Proved& done, bool verified,
           const NamedOutputs& outs) {
  std::string files;
  for (const auto& [option, file] : outs) files += (files.empty() ? "" : ", ") + file.path();
  char how[96];
  if (done.points == engine::workloads::KeyPoints::checked_before)
    std::snprintf(how, sizeof how, "checked before: its digest in %.3f s", done.digest_s);
  else if (done.points == engine::workloads::KeyPoints::checked && done.digest_s > 0)
    std::snprintf(how, sizeof how, "checked; its digest taken in %.3f s", done.digest_s);
  else
    std::snprintf(how, sizeof how, "%s", engine::workloads::key_points_name(done.points));
  char upload[160] = "", points_read[112] = "";
  if (done.uploaded)
    std::snprintf(upload, sizeof upload, "its points read onto the device in %.3f s (%s), ",
                  done.upload_s, how);
  else
    std::snprintf(points_read, sizeof points_read, " (points %s)", how);
  std::printf(
      "proof for %zu wires over 2^%u points (%s key): %s in %.3f s%s, %sproved in %.3f s "
      "(%s) %s; %s written\n",
      key.num_vars, key.log_n, key.format == g16::KeyFormat::snarkjs ? "snarkjs" : "bellman",
      done.uploaded ? "the key's file opened and the witness read" : "read", load_s, points_read,
      upload,
      done.prove_s, verified ? "verified" : "not verified", done.where.c_str(), files.c_str());
  return 0;
}

int prove_snarkjs(const CommandLine& cl, const Paths& p, const Placement& at) {
  if (p.wtns.empty()) return cl.usage_error("--zkey needs --wtns");
  if (p.proof.empty()) return cl.usage_error("--zkey needs --proof");
  if (p.public_.empty()) return cl.usage_error("--zkey needs --public");
  for (const auto& in : {p.zkey, p.wtns})
    if (auto size = input_size(in); !size) return cl.usage_error(size.error().what());
  auto outs = check_outputs({{"--proof", p.proof}, {"--public", p.public_}},
                            {{"--zkey", p.zkey}, {"--wtns", p.wtns}});
  if (!outs) return cl.usage_error(outs.error().what());

  const auto start = std::chrono::steady_clock::now();
  auto key = key_for(
      at, p.zkey,
      [&](g16::PointCheck check, unsigned threads) {
        return g16::read_zkey(p.zkey, check, threads);
      },
      [&](unsigned threads) { return g16::open_zkey(p.zkey, threads); });
  if (!key) return cl.failure(key.error().what());
  auto witness = g16::read_wtns(p.wtns, at.threads);
  if (!witness) return cl.failure(witness.error().what());
  const double load_s = common::seconds_since(start);
  auto shared_witness = std::make_shared<const g16::WitnessValues>(std::move(*witness));

  auto done = prove_at(at, *key, shared_witness, nullptr, p.zkey, p.wtns);
  if (!done) return cl.failure(done.error().what());
  const std::span<const kernels::Fr> inputs(shared_witness->data() + 1, key->head().num_public);
  if (Error e = write_snarkjs_proof_outputs(*outs, done->proof, inputs))
    return cl.failure(e.what());
  return report(key->head(), load_s, *done, at.verify, *outs);
}

int prove_bellman(const CommandLine& cl, const Paths& p, const Placement& at) {
  if (p.witness.empty()) return cl.usage_error("--params needs --witness");
  if (p.proof_bytes.empty()) return cl.usage_error("--params needs --proof-bytes");
  for (const auto& in : {p.params, p.witness})
    if (auto size = input_size(in); !size) return cl.usage_error(size.error().what());
  auto outs = check_outputs(
      {{"--proof-bytes", p.proof_bytes}, {"--proof-json", p.proof_json}, {"--inputs", p.inputs}},
      {{"--params", p.params}, {"--witness", p.witness}});
  if (!outs) return cl.usage_error(outs.error().what());

  const auto start = std::chrono::steady_clock::now();
  auto key = key_for(
      at, p.params,
      [&](g16::PointCheck check, unsigned threads) {
        return g16::read_params(p.params, check, threads);
      },
      [&](unsigned threads) { return g16::open_params(p.params, threads); });
  if (!key) return cl.failure(key.error().what());
  auto witness = g16::read_bellman_witness(p.witness, at.threads);
  if (!witness) return cl.failure(witness.error().what());
  const double load_s = common::seconds_since(start);
  auto shared_witness = std::make_shared<const g16::BellmanWitness>(std::move(*witness));

  auto done = prove_at(at, *key, nullptr, shared_witness, p.params, p.witness);
  if (!done) return cl.failure(done.error().what());
  if (Error e = write_bellman_proof_outputs(*outs, done->proof,
                                            std::span(shared_witness->inputs).subspan(1)))
    return cl.failure(e.what());
  return report(key->head(), load_s, *done, at.verify, *outs);
}

}  // namespace

int prove_command(int argc, char** argv) {
  CommandLine cl("prove", kHelp);
  Paths p;
  bool trust_key = false, recheck_key = false, no_verify = false, cpu = false;
  unsigned threads = 0;
  std::optional<int> device;
  std::string backend;
  cl.value("--zkey", p.zkey);
  cl.value("--wtns", p.wtns);
  cl.value("--proof", p.proof);
  cl.value("--public", p.public_);
  cl.value("--params", p.params);
  cl.value("--witness", p.witness);
  cl.value("--proof-bytes", p.proof_bytes);
  cl.value("--proof-json", p.proof_json);
  cl.value("--inputs", p.inputs);
  cl.flag("--trust-key", trust_key);
  cl.flag("--recheck-key", recheck_key);
  cl.flag("--no-verify", no_verify);
  cl.number("--threads", threads, 1u, 4096u);
  cl.flag("--cpu", cpu);
  cl.gpu("--device", device);
  cl.choice("--backend", backend, {"host"});
  ServerProveArgs s;
  cl.value("--server", s.server);
  cl.value("--key", s.key);
  cl.value("--token-file", s.token_file);
  cl.choice("--priority", s.priority, {"critical", "high", "normal", "low"});
  cl.value("--idempotency-key", s.idempotency_key);
  cl.choice("--witness-by", s.witness_by, {"body", "path"});
  cl.exclusive({"--zkey", "--params"});
  cl.exclusive({"--cpu", "--device", "--backend"});
  cl.exclusive({"--trust-key", "--recheck-key"});
  for (const char* o : {"--wtns", "--proof", "--public"}) cl.exclusive({o, "--params"});
  for (const char* o : {"--witness", "--proof-bytes", "--proof-json", "--inputs"})
    cl.exclusive({o, "--zkey"});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (!s.server.empty()) {
    for (const char* o : {"--zkey", "--params"})
      if (cl.given(o))
        return cl.usage_error(std::string(o) +
                              " does not go with --server: the daemon proves with a key it holds, "
                              "named by --key (stoker keys load)");
    for (const char* o :
         {"--threads", "--trust-key", "--recheck-key", "--no-verify", "--cpu", "--device",
          "--backend"})
      if (cl.given(o))
        return cl.usage_error(std::string(o) +
                              " does not go with --server: the daemon's own settings decide it "
                              "(stoker serve --help)");
    s.wtns = p.wtns;
    s.proof = p.proof;
    s.public_ = p.public_;
    s.witness = p.witness;
    s.proof_bytes = p.proof_bytes;
    s.proof_json = p.proof_json;
    s.inputs = p.inputs;
    return prove_by_server(cl, s);
  }
  const std::string server_only =
      cl.first_given({"--key", "--token-file", "--priority", "--idempotency-key", "--witness-by"});
  if (!server_only.empty()) return cl.usage_error(server_only + " goes with --server");
  Placement at;
  at.check_points = !trust_key;
  at.recheck_key = recheck_key;
  std::optional<g16::CheckedKeys> record;
  if (auto file = g16::CheckedKeys::user_file()) record.emplace(*file);
  at.checked_keys = record ? &*record : nullptr;
  at.threads = threads;
  at.verify = !no_verify;
  at.device = device.value_or(0);
  if (!backend.empty())
    at.kind = Placement::Kind::host_engine;
  else if (device || (!cpu && devices::cuda_device_count() > 0))
    at.kind = Placement::Kind::gpu;
  if (!p.zkey.empty()) return prove_snarkjs(cl, p, at);
  if (!p.params.empty()) return prove_bellman(cl, p, at);
  return cl.usage_error("a key is required: --zkey (snarkjs) or --params (bellman)");
}

}  // namespace stoker::tools

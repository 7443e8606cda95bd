// See prove_bench.hpp. The job is the groth16 workload's
// (engine/workloads/groth16_workload.hpp), built afresh for every run so
// that each proof draws its own r and s; the build (the witness's split
// and the MSMs' plans) is not timed, the job is, as the engine reports it.
#include "tools/bench/prove_bench.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/workloads/groth16_workload.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"

namespace stoker::tools {
namespace {

namespace g16 = engine::groth16;
namespace wl = engine::workloads;

constexpr unsigned kMinLogN = 4, kMaxLogN = 26;

struct Options {
  std::vector<unsigned> log_n;
  std::size_t partitions = 8;
  int reps = 3;
  g16::KeyFormat format = g16::KeyFormat::bellman;
  bool porep = true;
  bool verify = true;
  bool json = false;
  std::uint64_t seed = 1;
};

// supraseal-c2 as Curio ships it (curio e0294b0, sppark 0.1.14) on one
// H200, one proof at a time, a key of the PoRep shape and the same witness
// mix (measured 2026-12-04, DESIGN.md).
struct Reference {
  double key_load_s, wall_ms, gpu_busy_ms;
};
std::optional<Reference> supraseal(unsigned log_n) {
  switch (log_n) {
    case 24:
      return Reference{5.4, 2028, 1144};
    case 26:
      return Reference{19.4, 6909, 4065};
    default:
      return std::nullopt;
  }
}

struct Row {
  unsigned log_n = 0;
  std::size_t wires = 0, num_public = 0;
  double a_density = 0, b_density = 0;
  double zeros = 0, ones = 0;  // of the private wires' values
  double key_make_s = 0, key_load_s = 0, key_mib = 0;
  // Medians over the timed jobs.
  double per_proof_ms = 0, bound_ms = 0, busy = 0;
  std::vector<std::string> steps;
  std::vector<double> step_ms;
  double finish_ms = 0;  // assembly (and check) of a proof on a worker
  bool verified = false;
};

// Whether 2^log_n points hold the PoRep shape's public inputs and some gates.
bool porep_fits(unsigned log_n) {
  return g16::porep_shape(log_n).num_public + 16 <= (std::size_t{1} << log_n);
}

std::string porep_needs() {
  return "the PoRep shape's " + std::to_string(g16::porep_shape(10).num_public) +
         " public inputs and its gates";
}

struct Failure {
  std::string what;
};
template <typename T>
T take(Result<T> r, const std::string& what) {
  if (!r) throw Failure{what + ": " + r.error().what()};
  return std::move(*r);
}

// One job of o.partitions proofs of `witness`, waited for. The verify
// callback (the proof's assembly and check) is timed per partition.
engine::JobReport run_job(engine::Engine& e, boost::asio::io_context& io, const wl::Groth16Key& key,
                          const std::shared_ptr<const g16::WitnessValues>& witness,
                          const std::shared_ptr<const g16::BellmanWitness>& bellman,
                          const Options& o, std::vector<double>& finish_ms) {
  wl::Groth16Options go;
  go.key = key;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    if (witness) go.witnesses.push_back(witness);
    if (bellman) go.bellman_witnesses.push_back(bellman);
  }
  go.verify = o.verify;
  go.devices = &e.devices();
  go.limits.pinned_budget_bytes = e.config().host_budget_bytes;
  go.name = "prove-2^" + std::to_string(key.key->log_n);
  std::shared_ptr<wl::Groth16Run> run;
  auto job = take(wl::make_groth16_job(go, run), "building the job");
  auto times = std::make_shared<std::vector<double>>(o.partitions, 0.0);
  job.verify = [inner = job.verify, times](const engine::Partition& part, std::size_t p) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::error_code ec = inner(part, p);
    (*times)[p] = common::seconds_since(t0) * 1e3;
    return ec;
  };
  std::error_code result;
  engine::JobReport report;
  e.async_submit(std::move(job), [&](std::error_code ec, engine::JobReport r) {
    result = ec;
    report = std::move(r);
  });
  io.restart();
  io.run();
  if (result)
    throw Failure{"the job failed: " + report.error +
                  (run && !run->failures.empty() && !run->failures[0].empty()
                       ? " (" + run->failures[0] + ")"
                       : "")};
  finish_ms = *times;
  return report;
}

Row run_size(engine::Engine& e, boost::asio::io_context& io, unsigned log_n, const Options& o) {
  Row row;
  row.log_n = log_n;
  const std::string at = "2^" + std::to_string(log_n);
  auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = std::size_t{1} << log_n;
  g16::ToyCircuitShape shape{.constraints = n - 2, .num_public = 1};
  if (o.porep) shape = g16::porep_shape(log_n);
  if (o.porep && !porep_fits(log_n))
    throw Failure{at + " points cannot hold " + porep_needs() +
                  ": take --log-n 10 or more, or --shape toy"};
  // The key's points on every GPU of the engine, as the groth16 workload does.
  g16::ToyKeyOptions options;
  options.log_n = log_n;
  if (e.devices().backend() == devices::Backend::cuda)
    for (std::size_t d = 0; d < e.devices().size(); ++d)
      options.cuda_ordinals.push_back(e.devices()[d].info().ordinal);
  if (Error err = common::check_host_memory(
          "a toy key of " + at + " points with its circuit",
          g16::toy_setup_host_bytes(shape, o.format, log_n, options.cuda_ordinals.size())))
    throw Failure{err.what()};
  const auto circuit = g16::make_toy_circuit(shape, o.seed);
  auto key =
      take(g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(o.seed), o.format, options),
           at + ": the toy key");
  std::shared_ptr<const g16::WitnessValues> witness;
  std::shared_ptr<const g16::BellmanWitness> bellman;
  if (o.format == g16::KeyFormat::bellman)
    bellman = std::make_shared<const g16::BellmanWitness>(
        g16::synthesize_bellman(circuit.r1cs, circuit.witness, log_n));
  else
    witness = std::make_shared<const g16::WitnessValues>(circuit.witness);
  row.key_make_s = common::seconds_since(t0);
  row.wires = key.num_vars;
  row.num_public = key.num_public;
  row.a_density = double(key.a.size()) / double(key.num_vars);
  row.b_density = double(key.b_g1.size()) / double(key.num_vars);
  std::size_t zeros = 0, ones = 0;
  const std::size_t first_private = circuit.r1cs.num_public + 1;
  for (std::size_t i = first_private; i < circuit.witness.size(); ++i) {
    zeros += circuit.witness[i].is_zero();
    ones += circuit.witness[i] == kernels::Fr::one();
  }
  const double private_wires =
      double(std::max<std::size_t>(1, circuit.witness.size() - first_private));
  row.zeros = double(zeros) / private_wires;
  row.ones = double(ones) / private_wires;
  auto shared = std::make_shared<const g16::ProvingKey>(std::move(key));

  t0 = std::chrono::steady_clock::now();
  const auto resident =
      take(wl::load_groth16_key(e, shared, "bench prove " + at), at + ": loading");
  row.key_load_s = common::seconds_since(t0);
  row.key_mib = static_cast<double>(resident.points.bytes()) / (1 << 20);
  shared.reset();  // the points are on the devices: the host's copy goes, as a daemon's does

  std::vector<double> per_proof, bound, busy, finish;
  std::vector<std::vector<double>> steps;
  for (int rep = -1; rep < o.reps; ++rep) {
    std::vector<double> fin;
    const auto report = run_job(e, io, resident, witness, bellman, o, fin);
    if (rep < 0) {
      // The pools, grown by the warm-up, stay for the timed jobs.
      row.steps = report.kernel_steps;
      steps.assign(row.steps.size(), {});
      continue;
    }
    per_proof.push_back(report.wall_ms / double(o.partitions));
    bound.push_back(report.bound_ms / double(o.partitions));
    double b = 0;
    for (double x : report.device_busy) b += x;
    busy.push_back(report.device_busy.empty() ? 0 : b / double(report.device_busy.size()));
    for (const auto& part : report.parts)
      for (std::size_t i = 0; i < steps.size() && i < part.kernel_steps_ms.size(); ++i)
        steps[i].push_back(part.kernel_steps_ms[i]);
    finish.insert(finish.end(), fin.begin(), fin.end());
  }
  row.per_proof_ms = median(per_proof);
  row.bound_ms = median(bound);
  row.busy = median(busy);
  for (auto& s : steps) row.step_ms.push_back(median(s));
  row.finish_ms = median(finish);
  row.verified = o.verify;
  return row;
}

void print_rows(const std::vector<Row>& rows, const Options& o) {
  std::printf("%5s %9s %7s %5s %5s %5s %5s %9s %8s %9s %8s %7s %6s", "log_n", "wires", "public",
              "A", "B", "0s", "1s", "key MiB", "load s", "proof ms", "bound", "x bnd", "busy");
  if (!rows.empty())
    for (const auto& s : rows[0].steps) std::printf(" %9s", s.c_str());
  std::printf(" %9s %10s %8s\n", o.verify ? "asm+check" : "assemble", "supraseal", "x supra");
  for (const Row& r : rows) {
    std::printf(
        "%5u %9zu %7zu %4.0f%% %4.0f%% %4.0f%% %4.0f%% %9.1f %8.2f %9.2f %8.2f %6.2fx %5.0f%%",
        r.log_n, r.wires, r.num_public, r.a_density * 100, r.b_density * 100, r.zeros * 100,
        r.ones * 100, r.key_mib, r.key_load_s, r.per_proof_ms, r.bound_ms,
        r.bound_ms > 0 ? r.per_proof_ms / r.bound_ms : 0.0, r.busy * 100);
    for (double ms : r.step_ms) std::printf(" %9.2f", ms);
    const auto ref = supraseal(r.log_n);
    if (ref)
      std::printf(" %9.2f %10.0f %7.2fx\n", r.finish_ms, ref->wall_ms,
                  ref->wall_ms / r.per_proof_ms);
    else
      std::printf(" %9.2f %10s %8s\n", r.finish_ms, "-", "-");
  }
  std::printf(
      "A, B: the queries' wires over all wires; 0s, 1s: the private wires' values; proof ms: a "
      "steady job's wall over its %zu proofs (median of %d jobs after a warm-up); "
      "bound: the pipeline's, DESIGN.md's model over the job's measured stages, per proof; busy: "
      "the devices' compute streams; kernel steps: medians over the partitions; %s: a proof's "
      "last step on a CPU worker; supraseal: supraseal-c2's wall per proof on one H200 (PoRep "
      "shape, one proof at a time, key load %s)\n",
      o.partitions, o.reps, o.verify ? "asm+check" : "assemble", "5.4 s at 2^24, 19.4 s at 2^26");
}

Json rows_json(const std::vector<Row>& rows) {
  Json out = Json::array();
  for (const Row& r : rows) {
    Json steps = Json::object();
    for (std::size_t i = 0; i < r.steps.size() && i < r.step_ms.size(); ++i)
      steps[r.steps[i]] = r.step_ms[i];
    Json j{{"log_n", r.log_n},
           {"wires", r.wires},
           {"public", r.num_public},
           {"a_density", r.a_density},
           {"b_density", r.b_density},
           {"witness_zeros", r.zeros},
           {"witness_ones", r.ones},
           {"key_make_s", r.key_make_s},
           {"key_load_s", r.key_load_s},
           {"key_mib", r.key_mib},
           {"per_proof_ms", r.per_proof_ms},
           {"bound_ms", r.bound_ms},
           {"busy", r.busy},
           {"kernel_steps_ms", steps},
           {"finish_ms", r.finish_ms},
           {"verified", r.verified}};
    if (const auto ref = supraseal(r.log_n))
      j["supraseal_c2"] = {{"per_proof_ms", ref->wall_ms},
                           {"key_load_s", ref->key_load_s},
                           {"gpu_busy_ms", ref->gpu_busy_ms}};
    out.push_back(j);
  }
  return out;
}

const std::string kHelp =
    std::string(
        "usage: stoker bench prove [--log-n 20,24,26] [--partitions N] [--reps N]\n"
        "                          [--shape porep|toy] [--format bellman|zkey] [--no-verify]\n"
        "                          [--seed S] [--json] [engine options]\n"
        "Whole Groth16 proofs through the engine over a toy key (testing only) made and\n"
        "loaded once per size: the wall per proof in a steady job, its pipeline bound, each\n"
        "kernel step, and supraseal-c2's figures where they were measured.\n"
        "  --log-n       sizes 2^K, K in 4..26 (default 20,24,26 on GPUs, 10 on the host backend)\n"
        "  --partitions  proofs per job (default 8)\n"
        "  --reps        timed jobs per size after a warm-up (default 3)\n"
        "  --shape       porep (default): 328 public inputs, A over every wire, B over about a\n"
        "                quarter, the witness 40 % zeros and 50 % ones; toy: one public input,\n"
        "                A and B over random wires\n"
        "  --format      the key's format (default bellman)\n"
        "  --no-verify   do not check each proof with the pairing (checked by default)\n"
        "  --seed S      the circuit's, the witness's and the key's (default 1)\n"
        "  --json        the figures as one JSON object\n") +
    kEngineOptionsHelp;

int bench_prove(int argc, char** argv) {
  CommandLine cl("bench prove", kHelp);
  engine::Config config;
  Options o;
  bool no_verify = false;
  cl.custom("--log-n", [&o](std::string_view text) -> std::string {
    std::stringstream list{std::string(text)};
    for (std::string item; std::getline(list, item, ',');) {
      const auto k = engine::parse_integer<unsigned>(item, kMinLogN, kMaxLogN);
      if (!k) return engine::integer_problem("--log-n", item, kMinLogN, kMaxLogN);
      o.log_n.push_back(*k);
    }
    if (o.log_n.empty()) return "--log-n: no size in '" + std::string(text) + "'";
    return {};
  });
  cl.number("--partitions", o.partitions, std::size_t{1}, std::size_t{4096});
  cl.number("--reps", o.reps, 1, 1000);
  cl.custom("--shape", [&o](std::string_view text) -> std::string {
    if (text != "porep" && text != "toy")
      return "--shape: '" + std::string(text) + "' is not porep or toy";
    o.porep = text == "porep";
    return {};
  });
  cl.custom("--format", [&o](std::string_view text) -> std::string {
    if (text != "bellman" && text != "zkey")
      return "--format: '" + std::string(text) + "' is not bellman or zkey";
    o.format = text == "zkey" ? g16::KeyFormat::snarkjs : g16::KeyFormat::bellman;
    return {};
  });
  cl.flag("--no-verify", no_verify);
  cl.number("--seed", o.seed);
  cl.flag("--json", o.json);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  o.verify = !no_verify;
  for (unsigned k : o.log_n)
    if (o.porep && !porep_fits(k))
      return cl.usage_error("2^" + std::to_string(k) + " points cannot hold " + porep_needs() +
                            ": take --log-n 10 or more, or --shape toy");
  try {
    boost::asio::io_context io;
    auto e = take(engine::Engine::create(io.get_executor(), config), "the engine");
    const bool gpu = e->devices().backend() == devices::Backend::cuda;
    if (o.log_n.empty())
      o.log_n = gpu ? std::vector<unsigned>{20, 24, 26} : std::vector<unsigned>{10};
    if (!o.json)
      std::printf(
          "stoker bench prove: %zu x %s (%s backend), %s shape, %s keys, %zu proofs a job, %s\n",
          e->devices().size(), e->devices()[0].info().name.c_str(), gpu ? "cuda" : "host",
          o.porep ? "PoRep" : "toy", o.format == g16::KeyFormat::bellman ? "bellman" : "zkey",
          o.partitions, o.verify ? "each checked with the pairing" : "not checked");
    std::vector<Row> rows;
    for (unsigned k : o.log_n) {
      rows.push_back(run_size(*e, io, k, o));
      if (!o.json)
        std::printf("  2^%u: key made in %.2f s, loaded on every device in %.2f s (%.1f MiB)\n", k,
                    rows.back().key_make_s, rows.back().key_load_s, rows.back().key_mib);
    }
    if (o.json) {
      Json j;
      j["ok"] = true;
      j["backend"] = gpu ? "cuda" : "host";
      j["partitions"] = o.partitions;
      j["reps"] = o.reps;
      j["shape"] = o.porep ? "porep" : "toy";
      j["format"] = o.format == g16::KeyFormat::bellman ? "bellman" : "zkey";
      j["rows"] = rows_json(rows);
      std::printf("%s\n", json_text(j).c_str());
    } else {
      print_rows(rows, o);
    }
  } catch (const Failure& f) {
    return cl.failure(f.what);
  }
  return 0;
}

}  // namespace

int bench_prove_command(int argc, char** argv) {
  return with_memory_guard("bench prove", [&] { return bench_prove(argc, argv); });
}

}  // namespace stoker::tools

#include "tools/commands/prove_on_engine.hpp"

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "common/elapsed.hpp"
#include "engine/groth16/cpu_prover.hpp"
#include "engine/workloads/groth16_key_check_once.hpp"
#include "engine/workloads/groth16_workload.hpp"

namespace stoker::tools {

namespace wl = engine::workloads;

Result<EngineProof> prove_on_engine(engine::Engine& engine, boost::asio::io_context& io,
                                    const EngineProofInputs& in) {
  if (!in.key && !in.file) return Error{Errc::invalid_argument, "prove_on_engine: no key"};
  // The checks the CPU prover makes, with its messages, before the key goes
  // to the devices.
  const auto& head = in.file ? in.file->head() : *in.key;
  const auto counts = in.file ? in.file->counts() : in.key->counts();
  const auto of_witness = [&](const Error& e) { return Error{e.code, in.witness_name + ": " + e.what()}; };
  if (in.witness)
    if (Error e = engine::groth16::check_witness(head, counts, *in.witness)) return of_witness(e);
  if (in.bellman)
    if (Error e = engine::groth16::check_assignment(head, counts, in.bellman->view()))
      return of_witness(e);
  EngineProof out;
  const auto upload_start = std::chrono::steady_clock::now();
  wl::Groth16Key resident;
  if (in.file) {
    auto loaded = wl::load_groth16_key_once(
        engine, *in.file, in.key_name,
        {.check_points = in.check_points, .record = in.checked_keys, .recheck = in.recheck_key});
    if (!loaded) return std::move(loaded).error();
    resident = std::move(loaded->key);
    out.points = loaded->points;
    out.digest_s = loaded->digest_s;
    out.record_note = std::move(loaded->record_note);
  } else {
    auto loaded = wl::load_groth16_key(engine, in.key, in.key_name, in.check_points);
    if (!loaded) return std::move(loaded).error();
    resident = std::move(*loaded);
    out.points = in.check_points ? wl::KeyPoints::checked : wl::KeyPoints::trusted;
  }
  out.upload_s = common::seconds_since(upload_start);

  wl::Groth16Options o = wl::groth16_options_on(engine, std::move(resident));
  if (in.witness) o.witnesses.push_back(in.witness);
  if (in.bellman) o.bellman_witnesses.push_back(in.bellman);
  o.verify = in.verify;
  o.cpu_threads = in.cpu_threads;
  o.name = "proof";
  std::shared_ptr<wl::Groth16Run> run;
  auto job = wl::make_groth16_job(o, run);
  if (!job) return of_witness(job.error());

  const auto prove_start = std::chrono::steady_clock::now();
  std::error_code result;
  engine::JobReport report;
  engine.async_submit(std::move(*job), [&](std::error_code ec, engine::JobReport r) {
    result = ec;
    report = std::move(r);
  });
  io.run();
  out.prove_s = common::seconds_since(prove_start);
  if (!run->failures.empty() && !run->failures[0].empty())
    return of_witness(Error{Errc::invalid_argument, run->failures[0]});
  if (result)
    return of_witness(Error{
        Errc::invalid_argument,
        "the proof's job failed: " + (report.error.empty() ? result.message() : report.error)});
  if (run->proved.empty() || !run->proved[0])
    return of_witness(Error{Errc::invalid_argument, "the proof's job ended without a proof"});
  out.proof = run->proofs[0];
  return out;
}

}  // namespace stoker::tools

// Submits one small job on the host backend through the installed package:
// headers as <stoker/...>, the names a user writes in stoker::, a PinnedVec
// from the engine, a future that throws JobError, and the idle check. The
// error codes come from <stoker/devices/error.hpp> as well as through
// engine.hpp. Then proves and verifies a small Groth16 proof over a toy key
// with stoker::groth16.
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <stoker/devices/error.hpp>
#include <stoker/engine/engine.hpp>
#include <stoker/engine/groth16/cpu_prover.hpp>
#include <stoker/engine/groth16/toy_key.hpp>
#include <stoker/engine/groth16/verifier.hpp>
#include <system_error>
#include <vector>

static_assert(std::is_error_code_enum<stoker::Errc>::value,
              "stoker::Errc converts to std::error_code, so handlers can compare codes with it");

int main() {
  stoker::Config config;
  config.devices.backend = stoker::BackendChoice::host;
  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config);

  constexpr std::size_t kBytes = 1 << 16;
  auto input = engine.make_pinned_vec<std::byte>(kBytes);
  if (!input) {
    std::fprintf(stderr, "stoker_consumer: %s\n", input.error().what().c_str());
    return 1;
  }
  for (std::size_t i = 0; i < kBytes; ++i) (*input)[i] = std::byte(i % 251);
  std::vector<std::byte> output(kBytes);

  stoker::Job job;
  job.name = "consumer";
  stoker::Partition part;
  part.inputs.push_back(stoker::Input::pinned(std::move(*input)));
  part.work.cpu = [](const stoker::KernelContext& c) {
    for (std::size_t i = 0; i < c.input_bytes[0]; ++i) c.outputs[0][i] = ~c.inputs[0][i];
    return std::error_code{};
  };
  part.outputs.push_back(stoker::Output::to(output));
  job.partitions.push_back(std::move(part));

  auto done = engine.async_submit(std::move(job), boost::asio::use_future);
  io.run();
  try {
    const stoker::JobReport report = done.get();
    std::printf("stoker_consumer: %zu/%zu partitions in %.1f ms\n", report.partitions_done,
                report.partitions, report.wall_ms);
  } catch (const stoker::JobError& e) {
    std::fprintf(stderr, "stoker_consumer: job failed: %s\n", e.what());
    return 1;
  }
  for (std::size_t i = 0; i < kBytes; ++i)
    if (output[i] != ~std::byte(i % 251)) {
      std::fprintf(stderr, "stoker_consumer: byte %zu is wrong\n", i);
      return 1;
    }
  if (!engine.stats().idle()) {
    std::fprintf(stderr, "stoker_consumer: the engine still holds memory after the job\n");
    return 1;
  }

  namespace g16 = stoker::engine::groth16;
  const auto circuit = g16::make_toy_circuit({.constraints = 30, .num_public = 2}, 1);
  auto key =
      g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(2), g16::KeyFormat::snarkjs);
  if (!key) {
    std::fprintf(stderr, "stoker_consumer: %s\n", key.error().what().c_str());
    return 1;
  }
  auto matrices = g16::ConstraintMatrices::from(*key);
  auto randomness = g16::ProofRandomness::from_os();
  if (!matrices || !randomness) {
    std::fprintf(stderr, "stoker_consumer: no matrices or randomness to prove with\n");
    return 1;
  }
  auto proof = g16::prove_cpu(*key, *matrices, circuit.witness, *randomness);
  if (!proof) {
    std::fprintf(stderr, "stoker_consumer: %s\n", proof.error().what().c_str());
    return 1;
  }
  const std::vector<stoker::kernels::Fr> inputs(circuit.witness.begin() + 1,
                                                circuit.witness.begin() + 3);
  if (auto e = g16::verify(key->vk, *proof, inputs)) {
    std::fprintf(stderr, "stoker_consumer: %s\n", e.what().c_str());
    return 1;
  }
  std::printf("stoker_consumer: a Groth16 proof over a toy key verifies\n");
  return 0;
}

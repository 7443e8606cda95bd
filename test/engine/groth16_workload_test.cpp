// The groth16 workload on both backends (test/backend.hpp): on the host
// backend the engine's real logic with the CPU kernels and two emulated
// devices, on CUDA every GPU with the GPU kernels. Keys of both formats
// resident on every device, proofs equal to the CPU prover's bit for bit with the same r and s, the
// proofs over snarkjs's own data valid against snarkjs's verification key,
// and a witness that breaks a constraint failing the job with a reason.
#include "engine/workloads/groth16_workload.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "engine/engine.hpp"
#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "test/backend.hpp"
#include "test/engine/engine_test_util.hpp"

namespace stoker::engine {
namespace {

namespace asio = boost::asio;
namespace g16 = groth16;
using kernels::Fr;
using test::run_job;

std::string data_file(const std::string& name) {
  return std::string(STOKER_GROTH16_DATA_DIR) + "/" + name;
}

bool same(const g16::Proof& x, const g16::Proof& y) {
  return g16::proof_json(x) == g16::proof_json(y);
}

g16::ProofRandomness fixed(std::uint64_t k) {
  return g16::ProofRandomness::fixed_for_tests(Fr::from_u64(1000 + k), Fr::from_u64(2000 + k));
}

struct Fixture {
  asio::io_context io;
  Engine engine{io.get_executor(), test::backend_config()};
};

// On a GPU also a key of 2^15 points, nearer the sizes the GPU kernels are
// made for; the host backend's CPU kernels stay at 120 constraints, for CI's
// time.
constexpr std::size_t kBigConstraints = test::kBackend == devices::Backend::cuda ? 20000 : 0;

// Proofs of the same witness through the workload and through the CPU
// prover with the same r and s: equal bit for bit, valid, and r and s wiped.
void prove_and_compare(Fixture& f, g16::KeyFormat format, std::size_t constraints) {
  const auto circuit = g16::make_toy_circuit({.constraints = constraints, .num_public = 2}, 21);
  auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(22), format, 0, 2);
  ASSERT_TRUE(key) << key.error().what();
  auto shared_key = std::make_shared<const g16::ProvingKey>(std::move(*key));
  auto loaded = workloads::load_groth16_key(f.engine, shared_key);
  ASSERT_TRUE(loaded) << loaded.error().what();

  constexpr std::size_t kProofs = 3;
  workloads::Groth16Options o;
  o.key = *loaded;
  o.devices = &f.engine.devices();
  o.cpu_threads = 1;
  std::vector<g16::BellmanWitness> syntheses;
  for (std::size_t p = 0; p < kProofs; ++p) {
    o.randomness.push_back(fixed(p));
    if (format == g16::KeyFormat::snarkjs)
      o.witnesses.push_back(std::make_shared<const std::vector<Fr>>(circuit.witness));
    else
      o.bellman_witnesses.push_back(std::make_shared<const g16::BellmanWitness>(
          g16::synthesize_bellman(circuit.r1cs, circuit.witness, shared_key->log_n)));
  }
  std::shared_ptr<workloads::Groth16Run> run;
  auto job = workloads::make_groth16_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  ASSERT_FALSE(ec) << ec.message() << " " << report.error;
  const std::vector<Fr> inputs(circuit.witness.begin() + 1, circuit.witness.begin() + 3);
  for (std::size_t p = 0; p < kProofs; ++p) {
    ASSERT_TRUE(run->proved[p]) << p;
    Result<g16::Proof> want = Error{};
    if (format == g16::KeyFormat::snarkjs) {
      auto m = g16::ConstraintMatrices::from(*shared_key);
      ASSERT_TRUE(m);
      want = g16::prove_cpu(*shared_key, *m, circuit.witness, fixed(p));
    } else {
      want = g16::prove_cpu(*shared_key, o.bellman_witnesses[p]->view(), fixed(p));
    }
    ASSERT_TRUE(want) << want.error().what();
    EXPECT_TRUE(same(run->proofs[p], *want)) << "proof " << p;
    EXPECT_TRUE(run->options.randomness[p].r.is_zero() && run->options.randomness[p].s.is_zero())
        << "proof " << p << ": r and s kept after the proof was made";
    EXPECT_FALSE(g16::verify(shared_key->vk, run->proofs[p], inputs)) << "proof " << p;
  }
  EXPECT_FALSE(same(run->proofs[0], run->proofs[1]));
  ASSERT_EQ(report.kernel_steps.size(), 6u);
}

class Groth16Workload : public ::testing::TestWithParam<g16::KeyFormat> {};

TEST_P(Groth16Workload, ProofsEqualTheCpuProversWithTheSameRandomness) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  const auto format = GetParam();
  for (const std::size_t constraints : {std::size_t{120}, std::size_t{kBigConstraints}}) {
    if (constraints == 0) continue;
    SCOPED_TRACE(constraints);
    prove_and_compare(f, format, constraints);
  }
  test::expect_idle(f.engine);
}

INSTANTIATE_TEST_SUITE_P(BothFormats, Groth16Workload,
                         ::testing::Values(g16::KeyFormat::snarkjs, g16::KeyFormat::bellman),
                         [](const auto& info) {
                           return info.param == g16::KeyFormat::snarkjs ? "snarkjs" : "bellman";
                         });

TEST(Groth16WorkloadData, ProvesSnarkjssCircuitsThroughTheEngine) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  for (const char* c : {"multiplier", "bits", "nopublic"}) {
    auto key = g16::read_zkey(data_file(std::string(c) + ".zkey"));
    ASSERT_TRUE(key) << key.error().what();
    auto w = g16::read_wtns(data_file(std::string(c) + ".wtns"));
    ASSERT_TRUE(w) << w.error().what();
    auto vk = g16::read_verification_key_json(data_file(std::string(c) + "_verification_key.json"));
    ASSERT_TRUE(vk) << vk.error().what();
    auto pub = g16::read_public_json(data_file(std::string(c) + "_public.json"));
    ASSERT_TRUE(pub) << pub.error().what();
    auto loaded = workloads::load_groth16_key(
        f.engine, std::make_shared<const g16::ProvingKey>(std::move(*key)), c);
    ASSERT_TRUE(loaded) << loaded.error().what();
    workloads::Groth16Options o;
    o.key = *loaded;
    o.devices = &f.engine.devices();
    o.witnesses = {std::make_shared<const std::vector<Fr>>(std::move(*w))};
    std::shared_ptr<workloads::Groth16Run> run;
    auto job = workloads::make_groth16_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::error_code ec;
    const auto report = run_job(f.engine, f.io, std::move(*job), ec);
    ASSERT_FALSE(ec) << c << ": " << ec.message() << " " << report.error;
    EXPECT_FALSE(g16::verify(*vk, run->proofs[0], *pub)) << c;
  }
  test::expect_idle(f.engine);
}

TEST(Groth16WorkloadData, AWitnessThatBreaksAConstraintFailsTheJobSayingSo) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  auto key = g16::read_zkey(data_file("bits.zkey"));
  auto w = g16::read_wtns(data_file("bits.wtns"));
  ASSERT_TRUE(key && w);
  auto loaded = workloads::load_groth16_key(
      f.engine, std::make_shared<const g16::ProvingKey>(std::move(*key)));
  ASSERT_TRUE(loaded);
  auto bad = *w;
  bad.back() += Fr::one();
  workloads::Groth16Options o;
  o.key = *loaded;
  o.devices = &f.engine.devices();
  o.witnesses = {std::make_shared<const std::vector<Fr>>(*w),
                 std::make_shared<const std::vector<Fr>>(bad)};
  std::shared_ptr<workloads::Groth16Run> run;
  auto job = workloads::make_groth16_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  std::error_code ec;
  run_job(f.engine, f.io, std::move(*job), ec);
  EXPECT_TRUE(ec);
  EXPECT_NE(run->failures[1].find("does not satisfy"), std::string::npos) << run->failures[1];
  test::expect_idle(f.engine);
}

TEST(Groth16WorkloadData, RefusesAWitnessOfAnotherCircuitBeforeAnyWork) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  auto key = g16::read_zkey(data_file("multiplier.zkey"));
  auto w = g16::read_wtns(data_file("bits.wtns"));
  ASSERT_TRUE(key && w);
  auto loaded = workloads::load_groth16_key(
      f.engine, std::make_shared<const g16::ProvingKey>(std::move(*key)));
  ASSERT_TRUE(loaded);
  workloads::Groth16Options o;
  o.key = *loaded;
  o.devices = &f.engine.devices();
  o.witnesses = {std::make_shared<const std::vector<Fr>>(std::move(*w))};
  std::shared_ptr<workloads::Groth16Run> run;
  auto job = workloads::make_groth16_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().what().find("proof 0: the witness holds 100, the key wants 26"),
            std::string::npos)
      << job.error().what();
}

}  // namespace
}  // namespace stoker::engine

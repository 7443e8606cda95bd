// The groth16 workload on both backends (test/backend.hpp): on the host
// backend the engine's real logic with the CPU kernels and two emulated
// devices, on CUDA every GPU with the GPU kernels. Keys of both formats
// resident on every device, proofs equal to the CPU prover's bit for bit with the same r and s, the
// proofs over snarkjs's own data valid against snarkjs's verification key,
// and a witness that breaks a constraint failing the job with a reason.
#include "engine/workloads/groth16_workload.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstring>
#include <functional>
#include <span>

#include "engine/engine.hpp"
#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "kernels/msm.hpp"
#include "test/backend.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/engine/groth16/groth16_files_test_util.hpp"
#include "test/kernels/g2_test_util.hpp"

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
  // The host keeps the verifying key and the sizes, not a second copy of
  // the points the devices hold, and no reference to the caller's key.
  EXPECT_EQ(shared_key.use_count(), 1);
  const g16::ProvingKey& kept = *loaded->key;
  EXPECT_TRUE(kept.h.empty() && kept.l.empty() && kept.a.empty() && kept.b_g1.empty() &&
              kept.b_g2.empty() && kept.coefficients.empty());
  EXPECT_EQ(kept.vk.ic.size(), shared_key->vk.ic.size());
  const g16::QueryCounts want_counts = shared_key->counts(), counts = loaded->counts();
  EXPECT_TRUE(counts.h == want_counts.h && counts.l == want_counts.l && counts.a == want_counts.a &&
              counts.b_g1 == want_counts.b_g1 && counts.b_g2 == want_counts.b_g2);

  constexpr std::size_t kProofs = 3;
  workloads::Groth16Options o;
  o.key = *loaded;
  o.devices = &f.engine.devices();
  o.cpu_threads = 1;
  std::vector<g16::BellmanWitness> syntheses;
  for (std::size_t p = 0; p < kProofs; ++p) {
    o.randomness.push_back(fixed(p));
    if (format == g16::KeyFormat::snarkjs)
      o.witnesses.push_back(std::make_shared<const g16::WitnessValues>(circuit.witness));
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

// A key whose points the reader left unchecked (PointCheck::trusted) is
// checked as it reaches the devices: a bad point in any query fails the
// load naming the query and its index there, and nothing more stays
// resident.
TEST_P(Groth16Workload, KeyPointsAreCheckedOnTheDevicesNamingTheQueryAndIndex) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  const auto format = GetParam();
  const auto circuit = g16::make_toy_circuit({.constraints = 120, .num_public = 2}, 21);
  auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(22), format, 0, 2);
  ASSERT_TRUE(key) << key.error().what();
  auto good = workloads::load_groth16_key(f.engine, std::make_shared<const g16::ProvingKey>(*key),
                                          "good", true);
  ASSERT_TRUE(good) << good.error().what();
  const auto off_curve = [](kernels::G1Affine& p) { p.y = p.y + kernels::Fq::one(); };
  struct Case {
    std::function<void(g16::ProvingKey&)> spoil;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[&](g16::ProvingKey& k) { off_curve(k.h[5]); },
       "H point 5 is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { off_curve(k.l[2]); },
       "L point 2 is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { off_curve(k.a.back()); },
       "A point " + std::to_string(key->a.size() - 1) + " is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { off_curve(k.b_g1[0]); },
       "B_G1 point 0 is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { k.b_g2[1].y.c1 = k.b_g2[1].y.c1 + kernels::Fq::one(); },
       "B_G2 point 1 is not on the curve or not in G2"},
      {[&](g16::ProvingKey& k) { k.b_g2.back().x.c0 = k.b_g2.back().x.c0 + kernels::Fq::one(); },
       "B_G2 point " + std::to_string(key->b_g2.size() - 1) + " is not on the curve or not in G2"},
  };
  for (const auto& c : cases) {
    auto spoilt = *key;
    c.spoil(spoilt);
    const auto resident = f.engine.stats().srs_resident;
    auto loaded = workloads::load_groth16_key(
        f.engine, std::make_shared<const g16::ProvingKey>(std::move(spoilt)), "spoilt", true);
    ASSERT_FALSE(loaded) << c.says;
    EXPECT_NE(loaded.error().what().find(c.says), std::string::npos) << loaded.error().what();
    EXPECT_EQ(f.engine.stats().srs_resident, resident) << c.says;
    // Trusted, the same points load: the check is what refused them.
    EXPECT_TRUE(workloads::load_groth16_key(f.engine, std::make_shared<const g16::ProvingKey>(*key),
                                            "trusted", false));
  }
}

// A key large enough that GPUs check its queries by random buckets: points
// on the curves outside the groups, one among thousands or every H point
// moved by the same point of order 3, are named as one point off the curve
// is, and the load leaves nothing behind.
TEST_P(Groth16Workload, LargeKeysPointsOutsideTheGroupsAreNamed) {
  STOKER_REQUIRE_BACKEND();
  if (kBigConstraints == 0)
    GTEST_SKIP() << "GPUs only: the CPU's batched check has its own tests (kernels)";
  Fixture f;
  const auto format = GetParam();
  const auto circuit = g16::make_toy_circuit({.constraints = kBigConstraints, .num_public = 2}, 23);
  auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(24), format, 0, 2);
  ASSERT_TRUE(key) << key.error().what();
  ASSERT_GE(key->h.size(), 4 * kernels::gpu::kBatchCheckFrom);
  const auto t3 = kernels::test::g1_point_of_order_3();
  std::mt19937_64 rng(25);
  const auto e2_point = kernels::test::random_e2_point(rng);  // outside G2
  ASSERT_FALSE(in_subgroup(e2_point));
  const std::size_t h_at = key->h.size() / 2, a_at = key->a.size() - 2,
                    g2_at = key->b_g2.size() / 3;
  struct Case {
    std::function<void(g16::ProvingKey&)> spoil;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[&](g16::ProvingKey& k) { k.h[h_at] = kernels::test::plus(k.h[h_at], t3); },
       "H point " + std::to_string(h_at) + " is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { k.a[a_at] = kernels::test::g1_point_outside_the_group(); },
       "A point " + std::to_string(a_at) + " is not on the curve or not in G1"},
      {[&](g16::ProvingKey& k) { k.b_g2[g2_at] = e2_point; },
       "B_G2 point " + std::to_string(g2_at) + " is not on the curve or not in G2"},
      {[&](g16::ProvingKey& k) {
         for (auto& p : k.h) p = kernels::test::plus(p, t3);
       },
       "H point 0 is not on the curve or not in G1"},
  };
  const auto resident = f.engine.stats().srs_resident;
  for (const auto& c : cases) {
    auto spoilt = *key;
    c.spoil(spoilt);
    auto loaded = workloads::load_groth16_key(
        f.engine, std::make_shared<const g16::ProvingKey>(std::move(spoilt)), "spoilt", true);
    ASSERT_FALSE(loaded) << c.says;
    EXPECT_NE(loaded.error().what().find(c.says), std::string::npos) << loaded.error().what();
    EXPECT_EQ(f.engine.stats().srs_resident, resident) << c.says;
  }
  auto good = workloads::load_groth16_key(f.engine, std::make_shared<const g16::ProvingKey>(*key),
                                          "good", true);
  ASSERT_TRUE(good) << good.error().what();
  EXPECT_GT(f.engine.stats().srs_resident, resident);
}

// A key loaded from its file (read straight into the pinned blocks) and
// from memory proves as the CPU prover does, with blocks of 7 slots
// splitting G2 points between them; a bad coordinate anywhere, also in a G2 point split so,
// fails the load naming the file, the query, the point and its byte, and
// leaves nothing behind.
TEST_P(Groth16Workload, KeysLoadFromTheirFilesAsFromMemory) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  const auto format = GetParam();
  const bool snarkjs = format == g16::KeyFormat::snarkjs;
  g16::test::ScratchDir dir;
  const auto circuit = g16::make_toy_circuit({.constraints = 120, .num_public = 2}, 31);
  auto made = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(32), format, 0, 2);
  ASSERT_TRUE(made) << made.error().what();
  const g16::ProvingKey& key = *made;
  const std::string path = dir.path(snarkjs ? "k.zkey" : "k.params");
  ASSERT_FALSE(snarkjs ? g16::write_zkey(path, key) : g16::write_params(path, key));
  const auto open = [&](const std::string& p) {
    return snarkjs ? g16::open_zkey(p) : g16::open_params(p);
  };

  auto file = open(path);
  ASSERT_TRUE(file) << file.error().what();
  const g16::QueryCounts c = (*file)->counts(), want = key.counts();
  EXPECT_TRUE(c.h == want.h && c.l == want.l && c.a == want.a && c.b_g1 == want.b_g1 &&
              c.b_g2 == want.b_g2);
  kernels::G1Affine two[2];
  EXPECT_TRUE((*file)->read(g16::Query::l, c.l - 1, two));
  EXPECT_TRUE((*file)->read(g16::Query::b_g2, 0, std::span<kernels::G1Affine>(two, 1)));
  EXPECT_FALSE((*file)->read(g16::Query::l, c.l - 2, two));
  Result<g16::Proof> expected = Error{};
  std::shared_ptr<const g16::BellmanWitness> synthesis;
  if (snarkjs) {
    auto m = g16::ConstraintMatrices::from(key);
    ASSERT_TRUE(m);
    expected = g16::prove_cpu(key, *m, circuit.witness, fixed(0));
  } else {
    synthesis = std::make_shared<const g16::BellmanWitness>(
        g16::synthesize_bellman(circuit.r1cs, circuit.witness, key.log_n));
    expected = g16::prove_cpu(key, synthesis->view(), fixed(0));
  }
  ASSERT_TRUE(expected) << expected.error().what();
  for (const bool from_file : {true, false}) {
    SCOPED_TRACE(from_file ? "from the file" : "from memory");
    auto loaded =
        from_file
            ? workloads::load_groth16_key(f.engine, **file, "from the file", true, 7)
            : workloads::load_groth16_key(f.engine, std::make_shared<const g16::ProvingKey>(key),
                                          "from memory", true, 7);
    ASSERT_TRUE(loaded) << loaded.error().what();
    if (from_file) {
      EXPECT_TRUE((*file)->head().coefficients.empty());
    }
    if (from_file && snarkjs) {
      auto again = workloads::load_groth16_key(f.engine, **file, "again");
      ASSERT_FALSE(again);
      EXPECT_NE(again.error().what().find("open it again"), std::string::npos)
          << again.error().what();
    }
    workloads::Groth16Options o;
    o.key = *loaded;
    o.devices = &f.engine.devices();
    o.randomness = {fixed(0)};
    if (snarkjs)
      o.witnesses = {std::make_shared<const g16::WitnessValues>(circuit.witness)};
    else
      o.bellman_witnesses = {synthesis};
    std::shared_ptr<workloads::Groth16Run> run;
    auto job = workloads::make_groth16_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::error_code ec;
    const auto report = run_job(f.engine, f.io, std::move(*job), ec);
    ASSERT_FALSE(ec) << ec.message() << " " << report.error;
    EXPECT_TRUE(same(run->proofs[0], *expected));
  }
  test::expect_idle(f.engine);

  // An x of all ones (not below q) in L's point 3, and in B_G2's points 2
  // and 3: with blocks of 7 slots one of those two straddles an edge.
  const auto bytes = g16::test::read_bytes(path);
  const std::size_t g1 = 96, g2 = 192;
  struct Bad {
    g16::Query q;
    std::size_t index;
  };
  for (const Bad bad :
       {Bad{g16::Query::l, 3}, Bad{g16::Query::b_g2, 2}, Bad{g16::Query::b_g2, 3}}) {
    // Where the point lies, by the formats' layouts.
    std::size_t at = 0;
    if (snarkjs) {
      const auto s = g16::test::sections(bytes);
      at = bad.q == g16::Query::l ? s.at(8).data + g1 * bad.index : s.at(7).data + g2 * bad.index;
    } else {
      // Six head points (3 G1, 3 G2), IC, H, L, A, B_G1, B_G2: a u32 count before each vector.
      at = 3 * g1 + 3 * g2 + 4 + g1 * key.vk.ic.size() + 4 + g1 * key.h.size() + 4;
      if (bad.q == g16::Query::l)
        at += g1 * bad.index;
      else
        at += g1 * key.l.size() + 4 + g1 * key.a.size() + 4 + g1 * key.b_g1.size() + 4 +
              g2 * bad.index;
    }
    auto b = bytes;
    // A .params x is big-endian under three flag bits, which stay clear.
    std::fill(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at) + 48, 0xff);
    if (!snarkjs) b[at] = 0x1f;
    const std::string bad_path = dir.file(
        "bad_" + std::to_string(static_cast<int>(bad.q)) + "_" + std::to_string(bad.index), b);
    auto bad_file = open(bad_path);
    ASSERT_TRUE(bad_file) << bad_file.error().what();
    auto refused = workloads::load_groth16_key(f.engine, **bad_file, "bad", true, 7);
    ASSERT_FALSE(refused) << g16::query_name(bad.q) << " " << bad.index;
    const std::string what = refused.error().what();
    const std::string query =
        snarkjs ? (bad.q == g16::Query::l ? "C points" : "B2 points") : g16::query_name(bad.q);
    EXPECT_TRUE(what.find(bad_path) != std::string::npos && what.find(query) != std::string::npos &&
                what.find("point " + std::to_string(bad.index) + " (byte " + std::to_string(at) +
                          ")") != std::string::npos)
        << what;
    test::expect_idle(f.engine);
  }
}

// A G2 point's two slots can land in two pinned blocks: it is checked once
// both are on the device, and a bad one is named by its first slot.
TEST(Groth16KeySlots, G2PointsAcrossPinnedBlocksAreCheckedWhole) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  using kernels::G1Affine;
  using kernels::G2Affine;
  // 5 G1 points, then 3 G2 points in slots 5..10: blocks of 4 slots split
  // the second G2 point (slots 7 and 8) across two of them.
  const std::vector<G1Affine> g1(5, G1Affine::generator());
  const auto load = [&](const std::vector<G2Affine>& g2, std::size_t g2_from) {
    const std::span<const G1Affine> segments[] = {
        g1, {reinterpret_cast<const G1Affine*>(g2.data()), 2 * g2.size()}};
    SrsLoadOptions o;
    o.label = "slots";
    o.g2_from = g2_from;
    o.chunk_points = 4;
    return f.engine.load_srs(std::span<const std::span<const G1Affine>>(segments), o);
  };
  const std::vector<G2Affine> good(3, G2Affine::generator());
  auto loaded = load(good, 5);
  ASSERT_TRUE(loaded) << loaded.error().what();
  EXPECT_EQ(loaded->points(), 11u);
  for (std::size_t j = 0; j < good.size(); ++j) {
    auto bad = good;
    bad[j].y.c0 = bad[j].y.c0 + kernels::Fq::one();
    auto refused = load(bad, 5);
    ASSERT_FALSE(refused) << j;
    EXPECT_NE(refused.error().what().find("point " + std::to_string(5 + 2 * j) +
                                          " is not on the curve or not in G2"),
              std::string::npos)
        << refused.error().what();
  }
  auto odd = load(good, 4);
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().what().find("not two a point"), std::string::npos) << odd.error().what();
}

// Slots past raw_from hold bytes that are not points (a snarkjs key's
// rows): they are not checked, canonical conversion leaves them alone, and
// they land on every device as they were, across the pinned blocks' edges.
TEST(Groth16KeySlots, RawSlotsLandAsTheyWere) {
  STOKER_REQUIRE_BACKEND();
  Fixture f;
  using kernels::Fq;
  using kernels::G1Affine;
  using kernels::G2Affine;
  // 5 G1 points, 2 G2 points (slots 5..8), then 5 raw slots (9..13), in
  // blocks of 4 slots, coordinates in canonical form.
  std::vector<G1Affine> slots(14);
  const auto canonical = [](Fq& x) {
    std::uint64_t v[6];
    x.to_canonical(v);
    std::memcpy(&x, v, sizeof v);
  };
  for (std::size_t i = 0; i < 5; ++i) {
    slots[i] = G1Affine::generator();
    canonical(slots[i].x);
    canonical(slots[i].y);
  }
  auto* g2 = reinterpret_cast<G2Affine*>(slots.data() + 5);
  for (std::size_t j = 0; j < 2; ++j) {
    g2[j] = G2Affine::generator();
    for (Fq* x : {&g2[j].x.c0, &g2[j].x.c1, &g2[j].y.c0, &g2[j].y.c1}) canonical(*x);
  }
  std::vector<std::byte> raw(5 * sizeof(G1Affine));
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::byte>(0xa5 ^ (i * 7));
  std::memcpy(slots.data() + 9, raw.data(), raw.size());
  SrsLoadOptions o;
  o.label = "slots";
  o.g2_from = 5;
  o.raw_from = 9;
  o.canonical = true;
  o.chunk_points = 4;
  auto loaded = f.engine.load_srs(std::span<const G1Affine>(slots), o);
  ASSERT_TRUE(loaded) << loaded.error().what();
  for (std::size_t d = 0; d < f.engine.devices().size(); ++d) {
    devices::Device& dev = f.engine.devices()[d];
    const auto* on = loaded->points_on(dev);
    ASSERT_NE(on, nullptr);
    std::vector<G1Affine> back(slots.size());
    auto stream = dev.create_stream();
    ASSERT_TRUE(stream);
    ASSERT_FALSE(stream->copy(back.data(), on, back.size() * sizeof(G1Affine)));
    ASSERT_FALSE(stream->synchronize());
    EXPECT_EQ(back[0].x, G1Affine::generator().x) << "device " << d << ": G1 converted";
    EXPECT_EQ(reinterpret_cast<const G2Affine*>(back.data() + 5)[1].y.c1,
              G2Affine::generator().y.c1)
        << "device " << d << ": G2 converted";
    EXPECT_EQ(std::memcmp(back.data() + 9, raw.data(), raw.size()), 0)
        << "device " << d << ": raw slots as they were";
  }
  // Raw slots that start inside a G2 point leave it half: refused.
  o.raw_from = 8;
  auto odd = f.engine.load_srs(std::span<const G1Affine>(slots), o);
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().what().find("not two a point"), std::string::npos) << odd.error().what();
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
    // The points' range checked by the reader, their curve and group on the
    // devices as they load.
    auto key = g16::read_zkey(data_file(std::string(c) + ".zkey"), g16::PointCheck::trusted);
    ASSERT_TRUE(key) << key.error().what();
    auto w = g16::read_wtns(data_file(std::string(c) + ".wtns"));
    ASSERT_TRUE(w) << w.error().what();
    auto vk = g16::read_verification_key_json(data_file(std::string(c) + "_verification_key.json"));
    ASSERT_TRUE(vk) << vk.error().what();
    auto pub = g16::read_public_json(data_file(std::string(c) + "_public.json"));
    ASSERT_TRUE(pub) << pub.error().what();
    auto loaded = workloads::load_groth16_key(
        f.engine, std::make_shared<const g16::ProvingKey>(std::move(*key)), c, true);
    ASSERT_TRUE(loaded) << loaded.error().what();
    workloads::Groth16Options o;
    o.key = *loaded;
    o.devices = &f.engine.devices();
    o.witnesses = {std::make_shared<const g16::WitnessValues>(std::move(*w))};
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
  o.witnesses = {std::make_shared<const g16::WitnessValues>(*w),
                 std::make_shared<const g16::WitnessValues>(bad)};
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
  o.witnesses = {std::make_shared<const g16::WitnessValues>(std::move(*w))};
  std::shared_ptr<workloads::Groth16Run> run;
  auto job = workloads::make_groth16_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().what().find("proof 0: the witness holds 100, the key wants 26"),
            std::string::npos)
      << job.error().what();
}

}  // namespace
}  // namespace stoker::engine

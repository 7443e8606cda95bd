// The ntt_msm_h workload on the host backend: whole jobs through the real
// engine on several emulated devices with the toy SRS resident, each point
// equal to the CPU reference (hpoly then MSM) and verified with the toy
// secret; wrong results caught; cancellation gives everything back.
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <cstring>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/msm.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using test::host_config;
using test::run_job;

constexpr std::uint64_t kSrsSeed = 5;

struct Fixture {
  asio::io_context io;
  Engine engine;
  std::vector<G1Affine> points;
  Srs srs;
  Fixture(int devices, unsigned log_n, std::vector<double> slowdown = {})
      : engine(io.get_executor(), host_config(devices, std::move(slowdown))),
        points(workloads::toy_srs_points(log_n)) {
    const auto e = workloads::make_toy_srs(kSrsSeed, log_n, 0, points);
    EXPECT_FALSE(e) << e.what();
    auto s = engine.load_srs(points);
    EXPECT_TRUE(s) << s.error().what();
    if (s) srs = *s;
  }
  workloads::NttMsmHOptions options(unsigned log_n, std::size_t partitions) {
    workloads::NttMsmHOptions o;
    o.partitions = partitions;
    o.log_n = log_n;
    o.seed = 11;
    o.srs = srs;
    o.devices = &engine.devices();
    o.verify = true;
    o.secret = workloads::toy_srs_secret(kSrsSeed);
    return o;
  }
};

// hpoly then MSM on the CPU, from the same a, b, c.
G1Affine reference_point(const std::vector<G1Affine>& points, std::uint64_t seed,
                         std::size_t partition, unsigned log_n, std::vector<Fr>* h_out = nullptr) {
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<Fr> a(n), b(n), c(n), h(n);
  workloads::hpoly_fill(seed, partition, 0, n, a.data(), b.data(), c.data());
  kernels::cpu::hpoly(h.data(), a.data(), b.data(), c.data(), log_n);
  if (h_out) *h_out = h;
  return kernels::to_affine(kernels::cpu::msm(points.data(), h.data(), n - 1));
}

bool same(const G1Affine& a, const G1Affine& b) {
  return a.x == b.x && a.y == b.y;
}

TEST(NttMsmHWorkload, EveryPartitionEqualsTheCpuReferenceAndVerifiesFrom2To4To2To10) {
  for (unsigned log_n : {4u, 7u, 10u}) {
    Fixture f(3, log_n);
    auto o = f.options(log_n, 5);
    std::shared_ptr<workloads::NttMsmHRun> run;
    auto job = workloads::make_ntt_msm_h_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::error_code ec;
    const auto report = run_job(f.engine, f.io, std::move(*job), ec);
    ASSERT_FALSE(ec) << report.error;
    EXPECT_EQ(report.partitions_done, 5u);
    EXPECT_TRUE(run->all_verified()) << "2^" << log_n;
    for (std::size_t p = 0; p < o.partitions; ++p) {
      EXPECT_TRUE(same(run->point(p), reference_point(f.points, o.seed, p, log_n)))
          << "2^" << log_n << " partition " << p;
      EXPECT_TRUE(same(run->point(p), run->checks[p].expected));
    }
    ASSERT_EQ(report.kernel_steps, (std::vector<std::string>{"hpoly", "msm"}));
    for (const auto& p : report.parts) {
      EXPECT_EQ(p.bytes_out, sizeof(kernels::G1Xyzz));
      ASSERT_EQ(p.kernel_steps_ms.size(), 2u) << "hpoly and msm timed apart";
      EXPECT_GE(p.kernel_steps_ms[0], 0.0);
      EXPECT_GE(p.kernel_steps_ms[1], 0.0);
      // The steps lie inside the kernel span; what is left of it is the
      // worker's start and end around them (more on a loaded machine, so
      // the lower bound is loose).
      const double steps = p.kernel_steps_ms[0] + p.kernel_steps_ms[1];
      EXPECT_LE(steps, p.kernels.ms + 0.01);
      EXPECT_GE(steps, 0.5 * p.kernels.ms);
    }
    test::expect_idle(f.engine);
  }
}

TEST(NttMsmHWorkload, KeepHBringsBackTheCpuReferencesHAndChecksIt) {
  const unsigned log_n = 8;
  Fixture f(2, log_n);
  auto o = f.options(log_n, 3);
  o.keep_h = true;
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    std::vector<Fr> h;
    reference_point(f.points, o.seed, p, log_n, &h);
    const auto got = run->h_of(p);
    ASSERT_EQ(got.size(), h.size());
    EXPECT_EQ(std::memcmp(got.data(), h.data(), h.size() * sizeof(Fr)), 0) << "partition " << p;
    EXPECT_TRUE(run->checks[p].h_checked && run->checks[p].h_ok) << "partition " << p;
  }
}

TEST(NttMsmHWorkload, VerificationRejectsAWrongPointAndAWrongH) {
  const unsigned log_n = 6;
  Fixture f(1, log_n);
  const auto secret = workloads::toy_srs_secret(kSrsSeed);
  std::vector<Fr> h;
  const auto good = reference_point(f.points, 11, 0, log_n, &h);
  workloads::NttMsmHCheck check;
  EXPECT_FALSE(workloads::ntt_msm_h_verify(11, 0, log_n, log_n, secret, good, {}, 0, &check));
  EXPECT_TRUE(check.ok);
  EXPECT_EQ(workloads::ntt_msm_h_verify(11, 1, log_n, log_n, secret, good, {}, 0),
            make_error_code(Errc::verification_failed))
      << "another partition's point";
  EXPECT_EQ(workloads::ntt_msm_h_verify(11, 0, log_n, log_n,
                                        workloads::toy_srs_secret(kSrsSeed + 1), good, {}, 0),
            make_error_code(Errc::verification_failed))
      << "another SRS's secret";
  h[3] += Fr::one();
  EXPECT_EQ(workloads::ntt_msm_h_verify(11, 0, log_n, log_n, secret, good, h, 0, &check),
            make_error_code(Errc::verification_failed));
  EXPECT_TRUE(check.ok) << "the point is right";
  EXPECT_FALSE(check.h_ok) << "h is not";
}

// The weights a job's checks share give the same verdicts as the check that
// works them out itself: the right point and h pass, another partition's
// point, a point off by G and a changed coefficient of h do not.
TEST(NttMsmHWorkload, VerificationWithSharedWeightsCatchesWhatTheOwnWeightsCatch) {
  const unsigned log_n = 7;
  const std::size_t n = std::size_t{1} << log_n;
  Fixture f(1, log_n);
  const auto secret = workloads::toy_srs_secret(kSrsSeed);
  std::vector<Fr> weights(n);
  workloads::hpoly_weights(secret.tau, log_n, weights, 2);
  for (std::size_t p = 0; p < 3; ++p) {
    std::vector<Fr> h;
    const auto good = reference_point(f.points, 11, p, log_n, &h);
    workloads::NttMsmHCheck shared, own;
    EXPECT_FALSE(
        workloads::ntt_msm_h_verify(11, p, log_n, log_n, secret, good, h, 2, &shared, weights));
    EXPECT_FALSE(workloads::ntt_msm_h_verify(11, p, log_n, log_n, secret, good, h, 2, &own));
    EXPECT_TRUE(shared.ok && shared.h_checked && shared.h_ok) << "partition " << p;
    EXPECT_TRUE(same(shared.expected, own.expected)) << "partition " << p;

    EXPECT_EQ(
        workloads::ntt_msm_h_verify(11, p + 1, log_n, log_n, secret, good, {}, 2, &shared, weights),
        make_error_code(Errc::verification_failed))
        << "partition " << p + 1 << " with partition " << p << "'s point";
    kernels::G1Xyzz moved = kernels::to_xyzz(good);
    kernels::add_mixed(moved, G1Affine::generator());
    EXPECT_EQ(workloads::ntt_msm_h_verify(11, p, log_n, log_n, secret, kernels::to_affine(moved),
                                          {}, 2, &shared, weights),
              make_error_code(Errc::verification_failed))
        << "partition " << p << "'s point plus G";
    EXPECT_FALSE(shared.ok);
    h[n / 2 + p] += Fr::one();
    EXPECT_EQ(
        workloads::ntt_msm_h_verify(11, p, log_n, log_n, secret, good, h, 2, &shared, weights),
        make_error_code(Errc::verification_failed))
        << "partition " << p << " with one coefficient of h changed";
    EXPECT_TRUE(shared.ok) << "the point is right";
    EXPECT_FALSE(shared.h_ok) << "h is not";
  }
}

TEST(NttMsmHWorkload, VerificationRefusesWeightsOfAnotherPointOrSize) {
  const unsigned log_n = 5;
  const std::size_t n = std::size_t{1} << log_n;
  Fixture f(1, log_n);
  const auto secret = workloads::toy_srs_secret(kSrsSeed);
  const auto good = reference_point(f.points, 11, 0, log_n);
  std::vector<Fr> other(n), shorter(n / 2);
  workloads::hpoly_weights(workloads::toy_srs_secret(kSrsSeed + 1).tau, log_n, other);
  workloads::hpoly_weights(secret.tau, log_n - 1, shorter);
  EXPECT_EQ(workloads::ntt_msm_h_verify(11, 0, log_n, log_n, secret, good, {}, 1, nullptr, other),
            make_error_code(Errc::invalid_argument));
  EXPECT_EQ(workloads::ntt_msm_h_verify(11, 0, log_n, log_n, secret, good, {}, 1, nullptr, shorter),
            make_error_code(Errc::invalid_argument));
}

TEST(NttMsmHWorkload, EveryPartitionOfAJobSharesOneWeightsComputation) {
  const unsigned log_n = 8;
  Fixture f(3, log_n);
  auto o = f.options(log_n, 6);
  o.verify_threads = 2;
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  EXPECT_EQ(run->weights.computations(), 1u) << "computed by the builder, for the producers";
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  EXPECT_TRUE(run->all_verified());
  EXPECT_EQ(run->weights.computations(), 1u);
  // The first partition on each of the 3 devices is summed by its check,
  // the others by their producers.
  for (std::size_t p = 0; p < 6; ++p)
    EXPECT_EQ(run->checks[p].sums_from_producer, p >= 3) << "partition " << p;
  const auto weights = run->weights.get(o.secret->tau, log_n, 1);
  ASSERT_EQ(weights.size(), std::size_t{1} << log_n);
  EXPECT_EQ((o.secret->tau - Fr::one()) * weights[0], Fr::one()) << "the weights of tau";
  EXPECT_EQ(run->weights.computations(), 1u);
}

TEST(NttMsmHWorkload, AJobWithSharedWeightsFailsOnACorruptedPoint) {
  const unsigned log_n = 7;
  Fixture f(2, log_n);
  auto o = f.options(log_n, 4);
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  // Partition 2's device work returns its point plus G.
  auto& work = job->partitions[2].work.cpu;
  work = [inner = work](const KernelContext& c) {
    auto ec = inner(c);
    auto* sum = reinterpret_cast<kernels::G1Xyzz*>(c.outputs[0]);
    kernels::add_mixed(*sum, G1Affine::generator());
    return ec;
  };
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::verification_failed)) << report.error;
  EXPECT_NE(report.error.find("partition 2"), std::string::npos) << report.error;
  EXPECT_TRUE(run->checks[2].checked);
  EXPECT_FALSE(run->checks[2].ok);
  EXPECT_TRUE(run->checks[2].sums_from_producer) << "caught from its producer's sums";
  EXPECT_EQ(run->weights.computations(), 1u);
  test::expect_idle(f.engine);
}

TEST(NttMsmHWorkload, AJobWithSharedWeightsFailsOnACorruptedH) {
  const unsigned log_n = 7;
  Fixture f(2, log_n);
  auto o = f.options(log_n, 3);
  o.keep_h = true;
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  // Partition 1's h comes back with one coefficient changed after the MSM
  // used the right one.
  auto& work = job->partitions[1].work.cpu;
  work = [inner = work](const KernelContext& c) {
    auto ec = inner(c);
    reinterpret_cast<Fr*>(c.outputs[1])[33] += Fr::one();
    return ec;
  };
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::verification_failed)) << report.error;
  EXPECT_NE(report.error.find("partition 1"), std::string::npos) << report.error;
  EXPECT_TRUE(run->checks[1].ok) << "the point is right";
  EXPECT_TRUE(run->checks[1].h_checked);
  EXPECT_FALSE(run->checks[1].h_ok);
  EXPECT_EQ(run->weights.computations(), 1u);
}

TEST(NttMsmHWorkload, BuilderCountsTheSharedWeightsOnceAgainstTheMemoryLimit) {
  const unsigned log_n = 10;  // weights of 32 KiB
  Fixture f(1, log_n);
  auto o = f.options(log_n, 4);
  o.limits.host_memory_bytes = 4 * (sizeof(kernels::G1Xyzz) + sizeof(workloads::NttMsmHCheck) +
                                    workloads::kPartitionBookkeepingBytes) +
                               (std::size_t{32} << 10) - 1;
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_NE(job.error().what().find("and 32768 bytes for the whole job"), std::string::npos)
      << job.error().what();
  EXPECT_EQ(run, nullptr);
  o.limits.host_memory_bytes += 1;
  job = workloads::make_ntt_msm_h_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  o.limits.host_memory_bytes -= 1;
  o.verify = false;
  job = workloads::make_ntt_msm_h_job(o, run);
  EXPECT_TRUE(job) << "no weights without verification: " << job.error().what();
}

TEST(NttMsmHWorkload, SmallerJobsOverALargerToySrsVerify) {
  Fixture f(2, 9);  // 511 points
  for (unsigned log_n : {4u, 6u, 9u}) {
    auto o = f.options(log_n, 2);
    std::shared_ptr<workloads::NttMsmHRun> run;
    auto job = workloads::make_ntt_msm_h_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::error_code ec;
    const auto report = run_job(f.engine, f.io, std::move(*job), ec);
    ASSERT_FALSE(ec) << "2^" << log_n << ": " << report.error;
    EXPECT_TRUE(run->all_verified()) << "2^" << log_n;
    for (std::size_t p = 0; p < o.partitions; ++p)
      EXPECT_TRUE(same(run->point(p), reference_point(f.points, o.seed, p, log_n)));
  }
}

TEST(NttMsmHWorkload, AJobVerifiedWithTheWrongSecretFails) {
  const unsigned log_n = 5;
  Fixture f(2, log_n);
  auto o = f.options(log_n, 2);
  o.secret = workloads::toy_srs_secret(kSrsSeed + 1);
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job);
  std::error_code ec;
  const auto report = run_job(f.engine, f.io, std::move(*job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::verification_failed)) << report.error;
  EXPECT_FALSE(run->all_verified());
  test::expect_idle(f.engine);
}

TEST(NttMsmHWorkload, BuilderRefusesAnSrsTooSmallAndVerifyWithoutASecret) {
  Fixture f(1, 5);
  auto o = f.options(6, 1);  // 63 points needed, 31 resident
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().what().find("needs 63 SRS points"), std::string::npos)
      << job.error().what();
  EXPECT_NE(job.error().what().find("has 31"), std::string::npos) << job.error().what();
  EXPECT_EQ(run, nullptr);
  o = f.options(5, 1);
  o.secret.reset();
  job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().what().find("secret"), std::string::npos) << job.error().what();
  o = f.options(5, 1);
  o.srs = Srs{};
  EXPECT_FALSE(workloads::make_ntt_msm_h_job(o, run));
}

TEST(NttMsmHWorkload, CancellingMidJobGivesBackEveryByteButTheResidentPoints) {
  const unsigned log_n = 9;
  Fixture f(2, log_n, {10.0, 10.0});
  auto o = f.options(log_n, 24);
  std::shared_ptr<workloads::NttMsmHRun> run;
  auto job = workloads::make_ntt_msm_h_job(o, run);
  ASSERT_TRUE(job);
  asio::cancellation_signal cancel;
  std::error_code ec;
  JobReport report;
  std::size_t seen = 0;
  job->progress = [&](std::size_t done, std::size_t) {
    if (done >= 2 && seen++ == 0) cancel.emit(asio::cancellation_type::terminal);
  };
  f.engine.async_submit(std::move(*job),
                        asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code e, JobReport r) {
                          ec = e;
                          report = std::move(r);
                        }));
  f.io.run();
  f.io.restart();
  EXPECT_EQ(ec, operation_aborted()) << report.error;
  EXPECT_LT(report.partitions_done, 24u);
  test::expect_idle(f.engine);
  const auto s = f.engine.stats();
  for (auto b : s.device_resident_bytes) EXPECT_EQ(b, f.points.size() * sizeof(G1Affine));
  bool evicted = false;
  f.engine.async_evict_srs(f.srs, [&](boost::system::error_code) { evicted = true; });
  f.io.run();
  EXPECT_TRUE(evicted);
  for (auto b : f.engine.stats().device_resident_bytes) EXPECT_EQ(b, 0u);
}

}  // namespace
}  // namespace stoker::engine

// The hpoly workload on the host backend: the job runs through the real
// engine on two emulated devices, h equals the CPU reference on the same
// a, b, c, and the verification catches wrong results.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstring>
#include <vector>

#include "alloc/pinned_pool.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using kernels::Fr;
using test::host_config;
using test::run_job;

struct Inputs {
  std::vector<Fr> a, b, c;
};

Inputs inputs(std::uint64_t seed, std::size_t partition, unsigned log_n) {
  const std::size_t n = std::size_t{1} << log_n;
  Inputs in{std::vector<Fr>(n), std::vector<Fr>(n), std::vector<Fr>(n)};
  workloads::hpoly_fill(seed, partition, 0, n, in.a.data(), in.b.data(), in.c.data());
  return in;
}

std::vector<Fr> reference_h(std::uint64_t seed, std::size_t partition, unsigned log_n) {
  auto in = inputs(seed, partition, log_n);
  std::vector<Fr> h(in.a.size());
  kernels::cpu::hpoly(h.data(), in.a.data(), in.b.data(), in.c.data(), log_n);
  return h;
}

Fr horner(const std::vector<Fr>& coefficients, const Fr& x) {
  Fr acc = Fr::zero();
  for (std::size_t i = coefficients.size(); i-- > 0;) acc = acc * x + coefficients[i];
  return acc;
}

TEST(HpolyWorkload, JobOnTwoHostDevicesMatchesCpuReferenceAndVerifies) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  workloads::HpolyOptions o;
  o.partitions = 6;
  o.log_n = 10;
  o.seed = 7;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  EXPECT_EQ(report.partitions_done, 6u);
  for (const auto& p : report.parts) {
    EXPECT_EQ(p.bytes_in, 3u * 1024 * 32);
    EXPECT_EQ(p.bytes_out, 1024u * 32);
    EXPECT_TRUE(p.device == 0 || p.device == 1) << p.device;
  }
  for (std::size_t p = 0; p < o.partitions; ++p) {
    EXPECT_TRUE(run->checks[p].checked) << "partition " << p;
    EXPECT_TRUE(run->checks[p].ok) << "partition " << p;
    const auto expect = reference_h(o.seed, p, o.log_n);
    const auto got = run->output(p);
    ASSERT_EQ(std::memcmp(got.data(), expect.data(), expect.size() * sizeof(Fr)), 0)
        << "partition " << p << " differs from kernels::cpu::hpoly";
  }
  const auto s = engine.stats();
  EXPECT_EQ(s.pinned_bytes_in_use, 0u);
  EXPECT_EQ(s.host_budget_in_use, 0u);
}

// Registered h: the D2H lands in h itself, so a partition takes pinned blocks
// for a, b and c only. A budget of exactly those runs the job; the same
// budget refuses the pageable-h job, which needs a bounce block for h too.
TEST(HpolyWorkload, RegisteredHNeedsNoBounceBlockAndMatchesCpuReference) {
  for (unsigned log_n : {4u, 10u}) {  // 2^4: h is 512 bytes, well under a page
    const std::size_t bytes = (std::size_t{1} << log_n) * sizeof(Fr);
    Config cfg = host_config();
    cfg.host_budget_bytes = 3 * alloc::PinnedPool::block_capacity(bytes);
    asio::io_context io;
    Engine engine(io.get_executor(), cfg);
    workloads::HpolyOptions o;
    o.partitions = 5;
    o.log_n = log_n;
    o.seed = 11;

    std::shared_ptr<workloads::HpolyRun> pageable_run;
    auto pageable = workloads::make_hpoly_job(o, pageable_run);
    ASSERT_TRUE(pageable) << pageable.error().what();
    EXPECT_FALSE(pageable_run->h_registered());
    std::error_code ec;
    auto report = run_job(engine, io, std::move(*pageable), ec);
    EXPECT_EQ(ec, make_error_code(Errc::invalid_argument));
    EXPECT_NE(report.error.find("pinned host memory"), std::string::npos) << report.error;

    o.registered_outputs = devices::Backend::host;
    std::shared_ptr<workloads::HpolyRun> run;
    auto job = workloads::make_hpoly_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    ASSERT_TRUE(run->h_registered());
    EXPECT_EQ(run->h_registrations.size(), o.partitions);
    for (const auto& part : job->partitions) EXPECT_TRUE(part.outputs[0].pinned);
    report = run_job(engine, io, std::move(*job), ec);
    ASSERT_FALSE(ec) << report.error;
    for (std::size_t p = 0; p < o.partitions; ++p) {
      EXPECT_TRUE(run->checks[p].ok) << "partition " << p << ", log_n " << log_n;
      const auto expect = reference_h(o.seed, p, log_n);
      ASSERT_EQ(std::memcmp(run->output(p).data(), expect.data(), bytes), 0)
          << "partition " << p << ", log_n " << log_n << " differs from kernels::cpu::hpoly";
    }
    const auto s = engine.stats();
    EXPECT_EQ(s.pinned_bytes_in_use, 0u);
    EXPECT_EQ(s.host_budget_in_use, 0u);
  }
}

// The registrations end with the run: the same memory can be registered again.
TEST(HpolyWorkload, RegisteredHIsUnlockedWhenTheRunGoes) {
  workloads::HpolyOptions o;
  o.partitions = 2;
  o.log_n = 12;
  o.registered_outputs = devices::Backend::host;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  auto* h0 = run->h[0].get();
  const std::size_t bytes = run->n * sizeof(Fr);
  // Registered now: a second registration of the same pages is refused.
  EXPECT_FALSE(devices::register_host(devices::Backend::host, h0, bytes));
  run->h_registrations.clear();
  auto again = devices::register_host(devices::Backend::host, h0, bytes);
  EXPECT_TRUE(again) << again.error().what();
}

TEST(HpolyWorkload, PartitionsAreDistinctReproducibleAndCIsAB) {
  const unsigned log_n = 9;
  const std::size_t n = std::size_t{1} << log_n;
  const auto p0 = inputs(3, 0, log_n), p0_again = inputs(3, 0, log_n), p1 = inputs(3, 1, log_n),
             other_seed = inputs(4, 0, log_n);
  EXPECT_EQ(std::memcmp(p0.a.data(), p0_again.a.data(), n * sizeof(Fr)), 0);
  EXPECT_NE(std::memcmp(p0.a.data(), p1.a.data(), n * sizeof(Fr)), 0);
  EXPECT_NE(std::memcmp(p0.a.data(), other_seed.a.data(), n * sizeof(Fr)), 0);
  EXPECT_NE(std::memcmp(p0.a.data(), p0.b.data(), n * sizeof(Fr)), 0);
  std::size_t top_bit_set = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(Fr::is_canonical(p0.a[i].l)) << "a[" << i << "] is not reduced below r";
    EXPECT_TRUE(Fr::is_canonical(p0.b[i].l)) << "b[" << i << "] is not reduced below r";
    EXPECT_EQ(p0.c[i], p0.a[i] * p0.b[i]) << "c[" << i << "] != a*b";
    top_bit_set += (p0.a[i].l[3] >> 62) & 1;
  }
  // Random 255-bit values below r: bit 254 is set in roughly 40 % of them.
  EXPECT_GT(top_bit_set, n / 5);
  // Any sub-range, with or without non-temporal stores, gives the same elements.
  std::vector<Fr> a(100), b(100), c(100);
  workloads::hpoly_fill(3, 0, 123, 100, a.data(), b.data(), c.data(), /*nontemporal=*/true);
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(a[i], p0.a[123 + i]);
    EXPECT_EQ(b[i], p0.b[123 + i]);
    EXPECT_EQ(c[i], p0.c[123 + i]);
  }
}

TEST(HpolyWorkload, DrawnBitsAreBalanced) {
  // A draw is uniform below 2^255, minus r when >= r (so [0, 2^255 - r) is
  // twice as likely as the rest of [0, r)): bits 0..249 are set in half of
  // the elements, bits 250 and 251 in 46.9 %, bits 252..254 (which r has
  // set) in 40.6 %. A generator word stuck or short shows as a bit far off,
  // a poorly mixed counter (low bits with a short period) as a bit that
  // agrees with the same bit of the next element far from half the time
  // (2^14 draws: one sigma is 0.4 %).
  const unsigned log_n = 13;
  const auto in = inputs(9, 5, log_n);
  const double draws = 2.0 * in.a.size(), pairs = 2.0 * (in.a.size() - 1);
  for (int bit = 0; bit < 255; ++bit) {
    std::size_t set = 0, agree = 0;
    for (const auto* v : {&in.a, &in.b})
      for (std::size_t i = 0; i < v->size(); ++i) {
        const auto value = [&](std::size_t k) { return ((*v)[k].l[bit / 64] >> (bit % 64)) & 1; };
        set += value(i);
        if (i + 1 < v->size()) agree += value(i) == value(i + 1);
      }
    const double p = bit < 250 ? 0.5 : bit < 252 ? 0.469 : 0.406;
    EXPECT_NEAR(static_cast<double>(set) / draws, p, 0.03) << "bit " << bit;
    EXPECT_NEAR(static_cast<double>(agree) / pairs, p * p + (1 - p) * (1 - p), 0.03)
        << "bit " << bit;
  }
}

TEST(HpolyWorkload, BarycentricSumsMatchDirectEvaluationOfTheCoefficients) {
  const unsigned log_n = 7;
  const std::size_t n = std::size_t{1} << log_n;
  auto in = inputs(11, 2, log_n);
  auto h = reference_h(11, 2, log_n);
  const Fr x = workloads::hpoly_point(11, 2, log_n);
  ASSERT_NE(x.pow(n), Fr::one());
  for (unsigned threads : {1u, 3u}) {
    const auto s = workloads::hpoly_sums(11, 2, log_n, h, x, threads);
    const Fr z_over_n = (x.pow(n) - Fr::one()) * Fr::from_u64(n).inverse();
    const std::pair<const std::vector<Fr>*, Fr> vecs[] = {{&in.a, s.a}, {&in.b, s.b}, {&in.c, s.c}};
    for (const auto& [evals, sum] : vecs) {
      std::vector<Fr> coefficients(n);
      kernels::cpu::intt(coefficients.data(), evals->data(), log_n);
      EXPECT_EQ(z_over_n * sum, horner(coefficients, x)) << threads << " threads";
    }
    EXPECT_EQ(s.hx, horner(h, x)) << threads << " threads";
  }
}

TEST(HpolyWorkload, WeightsAreOneOverXTimesWToTheMinusIMinusOne) {
  const unsigned log_n = 6;
  const std::size_t n = std::size_t{1} << log_n;
  const Fr x = workloads::hpoly_point(3, 1, log_n);
  const Fr w_inv = Fr::root_of_unity(log_n).inverse();
  std::vector<Fr> weights(n);
  workloads::hpoly_weights(x, log_n, weights, 1);
  Fr u = x;
  for (std::size_t i = 0; i < n; ++i, u *= w_inv)
    EXPECT_EQ(weights[i] * (u - Fr::one()), Fr::one()) << "weight " << i;
}

// Over several threads and chunks (2^15 elements; on three threads two of
// the ranges start inside a chunk), with the weights given and worked out,
// against the coefficients evaluated directly.
TEST(HpolyWorkload, SumsWithGivenWeightsEqualDirectEvaluationOverThreadsAndChunks) {
  const unsigned log_n = 15;
  const std::size_t n = std::size_t{1} << log_n;
  auto in = inputs(4, 6, log_n);
  auto h = reference_h(4, 6, log_n);
  const Fr x = workloads::hpoly_point(4, 6, log_n);
  std::vector<Fr> weights(n);
  workloads::hpoly_weights(x, log_n, weights, 3);
  const Fr z_over_n = (x.pow(n) - Fr::one()) * Fr::from_u64(n).inverse();
  for (unsigned threads : {1u, 3u}) {
    const auto own = workloads::hpoly_sums(4, 6, log_n, h, x, threads);
    const auto given = workloads::hpoly_sums(4, 6, log_n, h, x, weights, threads);
    const std::pair<const std::vector<Fr>*, Fr> vecs[] = {
        {&in.a, given.a}, {&in.b, given.b}, {&in.c, given.c}};
    for (const auto& [evals, sum] : vecs) {
      std::vector<Fr> coefficients(n);
      kernels::cpu::intt(coefficients.data(), evals->data(), log_n);
      EXPECT_EQ(z_over_n * sum, horner(coefficients, x)) << threads << " threads";
    }
    EXPECT_EQ(given.hx, horner(h, x)) << threads << " threads";
    EXPECT_TRUE(own.a == given.a && own.b == given.b && own.c == given.c && own.hx == given.hx)
        << threads << " threads";
  }
  // Weights of another size are not read: the sums work out their own.
  const auto partial =
      workloads::hpoly_sums(4, 6, log_n, h, x, std::span<const Fr>(weights).first(n / 2), 2);
  const auto own = workloads::hpoly_sums(4, 6, log_n, h, x, 2);
  EXPECT_TRUE(partial.a == own.a && partial.b == own.b && partial.c == own.c);
}

TEST(HpolyWorkload, VerifyAcceptsTheReferenceAndCatchesACorruptedH) {
  const unsigned log_n = 10;
  const std::size_t n = std::size_t{1} << log_n;
  auto h = reference_h(5, 3, log_n);
  workloads::HpolyCheck check;
  EXPECT_FALSE(workloads::hpoly_verify(5, 3, log_n, h, 2, &check));
  EXPECT_TRUE(check.ok);
  EXPECT_TRUE(check.top_zero);
  EXPECT_EQ(check.lhs, check.rhs);
  // The reference h of another partition does not fit this one's a, b, c.
  EXPECT_EQ(workloads::hpoly_verify(5, 4, log_n, h, 2), make_error_code(Errc::verification_failed));

  auto flipped = h;
  flipped[n / 3].l[0] ^= 1;  // one bit of one coefficient
  EXPECT_EQ(workloads::hpoly_verify(5, 3, log_n, flipped, 2, &check),
            make_error_code(Errc::verification_failed));
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.lhs, check.rhs);

  auto top = h;
  top[n - 1] = Fr::one();  // h must have degree <= n - 2
  EXPECT_EQ(workloads::hpoly_verify(5, 3, log_n, top, 2, &check),
            make_error_code(Errc::verification_failed));
  EXPECT_FALSE(check.top_zero);

  EXPECT_EQ(workloads::hpoly_verify(5, 3, log_n - 1, h, 2),
            make_error_code(Errc::invalid_argument));
}

TEST(HpolyWorkload, WrongDeviceResultFailsTheJobAtVerification) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  workloads::HpolyOptions o;
  o.partitions = 4;
  o.log_n = 8;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  // Partition 2's device work writes one wrong coefficient.
  auto& work = job->partitions[2].work.cpu;
  work = [inner = work](const KernelContext& c) {
    auto ec = inner(c);
    reinterpret_cast<Fr*>(c.outputs[0])[17] += Fr::one();
    return ec;
  };
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::verification_failed)) << report.error;
  EXPECT_NE(report.error.find("partition 2"), std::string::npos) << report.error;
  EXPECT_TRUE(run->checks[2].checked);
  EXPECT_FALSE(run->checks[2].ok);
  EXPECT_EQ(engine.stats().pinned_bytes_in_use, 0u);
}

TEST(HpolyWorkload, WithoutVerifyNothingIsChecked) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  workloads::HpolyOptions o;
  o.partitions = 2;
  o.log_n = 6;
  o.verify = false;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job);
  EXPECT_FALSE(job->verify);
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_FALSE(run->checks[p].checked);
    EXPECT_FALSE(workloads::hpoly_verify(o.seed, p, o.log_n, run->output(p), 1));
  }
}

TEST(HpolyWorkload, BadLogNIsRejectedWithItsValue) {
  std::shared_ptr<workloads::HpolyRun> run;
  for (unsigned log_n : {0u, 29u, 40u}) {
    workloads::HpolyOptions o;
    o.log_n = log_n;
    auto job = workloads::make_hpoly_job(o, run);
    ASSERT_FALSE(job) << "log_n " << log_n << " accepted";
    EXPECT_EQ(job.error().code, make_error_code(Errc::invalid_argument));
    EXPECT_NE(job.error().what().find("log_n"), std::string::npos) << job.error().what();
    EXPECT_NE(job.error().what().find("not " + std::to_string(log_n)), std::string::npos)
        << job.error().what();
  }
  workloads::HpolyOptions none;
  none.partitions = 0;
  auto job = workloads::make_hpoly_job(none, run);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().what().find("partition"), std::string::npos);
}

TEST(HpolyWorkload, EditedPartitionShapeIsRejectedBeforeAnyWork) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  workloads::HpolyOptions o;
  o.partitions = 3;
  o.log_n = 6;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job);
  job->partitions[1].inputs[1].bytes /= 2;
  bool produced = false;
  for (auto& p : job->partitions)
    p.split_producer = [&produced, inner = p.split_producer](
                           std::span<const std::span<std::byte>> s, ProducerTask t) {
      produced = true;
      return inner(s, t);
    };
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::invalid_argument));
  EXPECT_NE(report.error.find("partition 1"), std::string::npos) << report.error;
  EXPECT_NE(report.error.find("input b"), std::string::npos) << report.error;
  EXPECT_FALSE(produced) << "a producer ran for a rejected job";
}

}  // namespace
}  // namespace stoker::engine

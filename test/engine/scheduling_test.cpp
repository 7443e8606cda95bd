// Which device runs which partition, and when: devices pull work at their
// own speed, affinity and priority are kept, equal priorities run in
// arrival order, kernels run in dispatch order without waiting for later
// partitions' copies, and the report prices the pipeline's fill and drain.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::synthetic;

TEST(Scheduling, FasterDeviceTakesMorePartitions) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2, {1.0, 8.0}));
  std::shared_ptr<workloads::SyntheticRun> run;
  JobReport report;
  workloads::SyntheticOptions o;
  o.partitions = 24;
  o.input_bytes = 512 << 10;
  o.rounds = 64;  // make the kernel dominate so the slowdown shows
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job);
  engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    report = std::move(r);
  });
  io.run();
  std::size_t on[2] = {0, 0};
  for (const auto& p : report.parts) ++on[p.device];
  EXPECT_GT(on[0], on[1]) << "fast device " << on[0] << ", slow device " << on[1];
  EXPECT_GT(on[1], 0u) << "the slow device should still pull work";
  expect_outputs_correct(*run);
}

// Partitions of very different sizes keep two equal devices busy to the
// end: the large ones are the even partitions, which taking turns would all
// hand to device 0 (16 times the bytes of device 1). Pulling, a device busy
// with a large partition leaves the next ones to the other, and the devices
// finish together. (What each device takes follows its speed, which on a
// loaded CPU varies; when they finish is the property.)
TEST(Scheduling, UnevenPartitionsBalanceAcrossEqualDevices) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run;
  workloads::SyntheticOptions o;
  o.partitions = 48;
  o.input_bytes = 1 << 20;
  o.rounds = 64;  // kernels dominate, as the balance should follow them
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job);
  for (std::size_t p = 1; p < job->partitions.size(); p += 2) {
    auto& part = job->partitions[p];
    part.inputs[0].bytes /= 16;
    part.outputs[0].bytes /= 16;
  }
  JobReport report;
  engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    report = std::move(r);
  });
  io.run();
  ASSERT_EQ(report.parts.size(), 48u);
  double last_end[2] = {0, 0}, largest = 0;
  for (const auto& p : report.parts) {
    auto& end = last_end[p.device];
    end = std::max(end, p.kernels.start_ms + p.kernels.ms);
    largest = std::max(largest, p.kernels.ms);
  }
  // Pulling, the devices end within a pipeline (depth 3) of large
  // partitions of each other (measured: at most one); taking turns, device
  // 1 would idle for 90 % of the job.
  const double gap = std::abs(last_end[0] - last_end[1]);
  EXPECT_LE(gap, 3 * largest) << "device 0's kernels end at " << last_end[0]
                              << " ms, device 1's at " << last_end[1]
                              << " ms; a large partition's take " << largest << " ms";
  EXPECT_GT(report.bytes_in_on(0), 0u);
  EXPECT_GT(report.bytes_in_on(1), 0u);
}

TEST(Scheduling, AffinityKeepsPartitionsOnChosenDevice) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 6);
  job.devices = std::vector<int>{1};
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    for (const auto& p : r.parts) EXPECT_EQ(p.device, 1);
  });
  io.run();
  expect_outputs_correct(*run);
}

TEST(Scheduling, HigherPriorityJobOvertakesQueuedPartitions) {
  asio::io_context io;
  auto c = host_config(1);
  c.worker_threads = 2;
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> low_run, high_run;
  workloads::SyntheticOptions o;
  o.partitions = 30;
  o.input_bytes = 256 << 10;
  o.rounds = 200;
  o.name = "low";
  auto low = workloads::make_synthetic_job(o, low_run);
  o.partitions = 2;
  o.priority = 10;
  o.name = "high";
  auto high = workloads::make_synthetic_job(o, high_run);
  std::vector<std::string> order;
  engine.async_submit(std::move(*low),
                      [&](std::error_code, JobReport r) { order.push_back(r.name); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  engine.async_submit(std::move(*high),
                      [&](std::error_code, JobReport r) { order.push_back(r.name); });
  io.run();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], "high");
}

// Jobs of equal priority run in arrival order: the first one's partitions
// go before the second's, so a short job submitted second does not overtake
// a long one. Among ready partitions, that is: a partition whose producer
// is still running is passed by a ready one of a later job (work goes on),
// so these inputs and outputs are registered and every partition is ready
// as soon as it is taken up, in rank order.
// Jobs of equal priority reach the device in the order they arrived: every
// partition of the first runs before any of the second. (Which handler runs
// first is not promised: a partition's last step runs on a worker, and a
// preempted worker lets a later job's handler go first.)
TEST(Scheduling, JobsOfEqualPriorityRunInArrivalOrder) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::mutex order_mu;
  std::vector<std::string> order;  // job names as their kernels run
  std::shared_ptr<workloads::SyntheticRun> runs[2];
  for (int j = 0; j < 2; ++j) {
    workloads::SyntheticOptions o;
    o.partitions = j == 0 ? 12 : 2;
    o.input_bytes = 256 << 10;
    o.rounds = 4;
    o.registered_inputs = devices::Backend::host;
    o.registered_outputs = devices::Backend::host;
    o.name = j == 0 ? "first" : "second";
    auto job = workloads::make_synthetic_job(o, runs[j]);
    ASSERT_TRUE(job) << job.error().what();
    for (auto& p : job->partitions)
      p.work.cpu = [cpu = p.work.cpu, name = o.name, &order_mu,
                    &order](const KernelContext& ctx) -> std::error_code {
        {
          std::lock_guard lock(order_mu);
          order.push_back(name);
        }
        return cpu(ctx);
      };
    engine.async_submit(std::move(*job),
                        [&](std::error_code ec, JobReport r) { EXPECT_FALSE(ec) << r.error; });
  }
  io.run();
  std::vector<std::string> expect(12, "first");
  expect.insert(expect.end(), 2, "second");
  EXPECT_EQ(order, expect);
  expect_outputs_correct(*runs[0]);
  expect_outputs_correct(*runs[1]);
}

// Partitions of one large input copied directly (registered here; pinned
// or streamed alike) and one smaller pageable input, so each has a staging
// pass beside its direct copy. Outputs: the first
// bytes of the large input, so kernels cost nothing. `order` gets each
// partition's index as its kernel runs.
Job direct_and_staged_job(std::size_t parts, std::size_t big, std::size_t small,
                          std::vector<std::vector<std::byte>>& inputs,
                          std::vector<std::vector<std::byte>>& outputs,
                          std::vector<std::size_t>& order) {
  constexpr std::size_t kOut = 4096;
  Job job;
  job.name = "direct+staged";
  for (std::size_t i = 0; i < parts; ++i) {
    inputs.emplace_back(big, std::byte(i + 1));
    inputs.emplace_back(small, std::byte(0x80 + i));
    outputs.emplace_back(kOut);
  }
  for (std::size_t i = 0; i < parts; ++i) {
    Partition p;
    p.inputs.push_back(Input::registered(inputs[2 * i]));
    p.inputs.push_back(Input::pageable(inputs[2 * i + 1]));
    p.outputs.push_back(Output::to(outputs[i]));
    p.work.cpu = [i, &order](const KernelContext& c) {
      order.push_back(i);  // the compute stream runs one kernel at a time
      std::memcpy(c.outputs[0], c.inputs[0], c.output_bytes[0]);
      return std::error_code{};
    };
    p.work.gpu = p.work.cpu;
    job.partitions.push_back(std::move(p));
  }
  return job;
}

// A partition's kernels wait for its own copies only. A feeder that sent
// partition N+1's direct copies while N's staging pass was still running,
// ahead of N's input event, would start N's kernels only after N+1's whole
// input had been copied (83 ms of such waiting in a traced run,
// docs/EXPERIMENTS.md). Even partitions here copy little and
// stage a little; odd ones copy 24 MiB directly on a slowed device: an
// even partition's kernels must start before the odd one's copy is half
// done, not after it.
TEST(Scheduling, KernelsDoNotWaitForTheNextPartitionsCopies) {
  asio::io_context io;
  auto c = host_config(1, {4.0});  // copies 4x slower than memcpy
  // One staging thread with two buffers: an 8-chunk pass waits for copies
  // queued ahead of its third chunk, so it ends after the feeder could
  // have moved on to the next partition.
  c.staging_threads = 1;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 8;
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<std::size_t> order;
  auto job = direct_and_staged_job(kParts, std::size_t{1} << 20, std::size_t{512} << 10, inputs,
                                   outputs, order);
  for (std::size_t i = 1; i < kParts; i += 2) {
    inputs[2 * i].assign(std::size_t{24} << 20, std::byte(i + 1));
    inputs[2 * i + 1].resize(1000);
    job.partitions[i].inputs[0] = Input::registered(inputs[2 * i]);
    job.partitions[i].inputs[1] = Input::pageable(inputs[2 * i + 1]);
  }
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t i = 0; i < kParts; ++i)
    EXPECT_EQ(outputs[i][4095], std::byte(i + 1)) << "partition " << i;
  ASSERT_EQ(report.parts.size(), kParts);
  for (std::size_t i = 0; i < kParts; i += 2) {
    const auto& next = report.parts[i + 1].h2d;
    EXPECT_LT(report.parts[i].kernels.start_ms, next.start_ms + next.ms / 2)
        << "partition " << i << "'s kernels waited for partition " << i + 1 << "'s copies";
  }
  expect_idle(engine);
}

// Kernels run in the order the partitions were dispatched, whatever order
// their staging passes end in: a long pass followed by a short one must
// not let the short one's kernels (and its input events) go first.
TEST(Scheduling, KernelsRunInDispatchOrderWhenShortPassesEndFirst) {
  asio::io_context io;
  auto c = host_config(1);
  c.staging_threads = 4;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 8;
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<std::size_t> order;
  auto job = direct_and_staged_job(kParts, 4096, 1000, inputs, outputs, order);
  // Every input staged, so that no direct copy makes the feeder wait for
  // the launch before; even partitions stage 6 MiB more (96 chunks).
  for (std::size_t i = 0; i < kParts; ++i) {
    if (i % 2 == 0) inputs[2 * i + 1].assign(std::size_t{6} << 20, std::byte(0x80 + i));
    job.partitions[i].inputs[0] = Input::pageable(inputs[2 * i]);
    job.partitions[i].inputs[1] = Input::pageable(inputs[2 * i + 1]);
  }
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  std::vector<std::size_t> dispatched;
  for (std::size_t i = 0; i < kParts; ++i) dispatched.push_back(i);
  EXPECT_EQ(order, dispatched);
  expect_idle(engine);
}

TEST(Scheduling, ManyConcurrentJobsAllCompleteExactlyOnce) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(3));
  constexpr int kJobs = 20;
  std::vector<std::shared_ptr<workloads::SyntheticRun>> runs(kJobs);
  std::vector<int> calls(kJobs, 0);
  for (int i = 0; i < kJobs; ++i)
    engine.async_submit(synthetic(runs[i], 1 + i % 5, 64 << 10, i % 2 == 0, i % 3),
                        [&, i](std::error_code ec, JobReport r) {
                          EXPECT_FALSE(ec) << r.error;
                          ++calls[i];
                        });
  io.run();
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    expect_outputs_correct(*runs[i]);
  }
  expect_idle(engine);
}

// Ten thousand small jobs submitted at once, one to three partitions each,
// inputs produced into pool blocks or pageable through staging, mixed
// priorities and affinities: each handler runs once without error, the
// outputs are right, and afterwards the engine holds nothing (budgets,
// pool blocks, device memory, slots) and runs as many threads as before.
TEST(Scheduling, TenThousandSmallJobsCompleteOnceAndLeaveNothingHeld) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  constexpr int kJobs = 10000;
  const auto threads_before = stoker::test::thread_count();
  std::vector<std::shared_ptr<workloads::SyntheticRun>> runs(kJobs);
  std::vector<int> calls(kJobs, 0);
  int failures = 0;
  for (int i = 0; i < kJobs; ++i) {
    auto job = synthetic(runs[i], 1 + i % 3, 4096 + 16 * (i % 7), i % 2 == 0, i % 4);
    if (i % 5 < 2) job.devices = std::vector<int>{i % 5};  // affinity for two in five
    engine.async_submit(std::move(job), [&, i](std::error_code ec, JobReport) {
      failures += ec ? 1 : 0;
      ++calls[i];
    });
  }
  io.run();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), 1), kJobs) << "every handler exactly once";
  for (int i = 0; i < kJobs; i += 97) expect_outputs_correct(*runs[i]);
  expect_idle(engine);
  EXPECT_EQ(stoker::test::thread_count(), threads_before);
}

// The model's stages of one partition, as the report prices them.
struct ModelStages {
  double in, kernels, out;
  double sum() const { return in + kernels + out; }
  double longest() const { return std::max({in, kernels, out}); }
};

ModelStages model_stages(const JobReport& r, const PartitionReport& p) {
  return {p.bytes_in / (r.h2d_gbps_model * 1e6), p.kernels.ms,
          p.bytes_out / (r.d2h_gbps_model * 1e6)};
}

TEST(Scheduling, ReportPricesFillAndDrainBesideTheModelBound) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code ec;
  // A lone partition cannot overlap anything: its bound is all its stages.
  const JobReport one = test::run_job(engine, io, synthetic(run, 1), ec);
  ASSERT_FALSE(ec) << one.error;
  ASSERT_EQ(one.parts.size(), 1u);
  const ModelStages s = model_stages(one, one.parts[0]);
  EXPECT_GT(s.in, 0.0);
  EXPECT_GT(s.kernels, 0.0);
  EXPECT_NEAR(one.bound_ms, s.longest(), 1e-9);
  EXPECT_NEAR(one.bound_ms + one.fill_drain_ms, s.sum(), 1e-9);
  // Several: the fill and drain of the partition that hides the least.
  const JobReport many = test::run_job(engine, io, synthetic(run, 8), ec);
  ASSERT_FALSE(ec) << many.error;
  double worst = 0;
  for (const auto& p : many.parts) {
    const ModelStages m = model_stages(many, p);
    worst = std::max(worst, m.sum() - m.longest());
  }
  EXPECT_GT(worst, 0.0);
  EXPECT_NEAR(many.fill_drain_ms, worst, 1e-9);
  expect_idle(engine);
}

}  // namespace
}  // namespace stoker::engine

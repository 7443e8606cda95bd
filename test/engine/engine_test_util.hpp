// What the engine suites share: configs for each backend, the jobs most
// suites run, running one job to completion, and the checks every suite
// makes (outputs equal the CPU version, nothing left held).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/backend.hpp"

namespace stoker::test {

using engine::Config;
using engine::Engine;
using engine::Input;
using engine::Job;
using engine::JobReport;
using engine::KernelContext;
namespace workloads = engine::workloads;

// Emulated devices with 256 MiB each, a 256 MiB host budget, four workers.
inline Config host_config(int devices = 2, std::vector<double> slowdown = {}) {
  Config c;
  c.devices.backend = devices::BackendChoice::host;
  c.devices.host.device_count = devices;
  c.devices.host.slowdown = std::move(slowdown);
  c.devices.host.memory_bytes = std::size_t{256} << 20;
  c.host_budget_bytes = std::size_t{256} << 20;
  c.staging_chunk_bytes = std::size_t{64} << 10;
  c.worker_threads = 4;
  return c;
}

// Every GPU, an 8 GiB host budget (the default, half of memory, is
// whatever the machine reports at start).
inline Config gpu_config() {
  Config c;
  c.devices.backend = devices::BackendChoice::cuda;
  c.host_budget_bytes = std::size_t{8} << 30;
  return c;
}

// GPU 0 alone, for the tests that break a job (or the GPU) on purpose.
inline Config gpu0_config() {
  auto c = gpu_config();
  c.devices.cuda_ordinals = {0};
  return c;
}

// The config of the backend this binary tests (test/backend.hpp).
inline Config backend_config() {
  return kBackend == devices::Backend::host ? host_config() : gpu_config();
}

// Device work of hand-built jobs: the output is the input.
inline std::error_code copy_through(const KernelContext& c) {
  std::memcpy(c.outputs[0], c.inputs[0], c.input_bytes[0]);
  return std::error_code{};
}

// A synthetic job of `partitions` inputs of `bytes` each, produced into
// pinned blocks or pageable, with a CPU and a GPU version of its kernels.
inline Job synthetic(std::shared_ptr<workloads::SyntheticRun>& run, std::size_t partitions = 8,
                     std::size_t bytes = 256 << 10, bool pageable = false, int priority = 0,
                     std::string name = "synthetic") {
  workloads::SyntheticOptions o;
  o.partitions = partitions;
  o.input_bytes = bytes;
  o.rounds = 4;
  o.pageable = pageable;
  o.priority = priority;
  o.name = std::move(name);
  auto job = workloads::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  return std::move(*job);
}

// Six synthetic partitions of 1 MiB.
inline Job six_small_partitions(std::shared_ptr<workloads::SyntheticRun>& run) {
  workloads::SyntheticOptions o;
  o.partitions = 6;
  o.input_bytes = 1 << 20;
  auto job = workloads::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  return std::move(*job);
}

// Submits `job`, runs `io` until its handler ran, and readies `io` for more.
inline JobReport run_job(Engine& engine, boost::asio::io_context& io, Job job,
                         std::error_code& ec) {
  JobReport report;
  engine.async_submit(std::move(job), [&](std::error_code e, JobReport r) {
    ec = e;
    report = std::move(r);
  });
  io.run();
  io.restart();
  return report;
}

// The threads of this process whose names start with `prefix`, as (thread
// id, name) pairs, from /proc/self/task.
inline std::vector<std::pair<int, std::string>> threads_named(const std::string& prefix) {
  std::vector<std::pair<int, std::string>> found;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind(prefix, 0) == 0)
      found.emplace_back(std::stoi(task.path().filename().string()), name);
  }
  return found;
}

// Nothing held: jobs, slots, budgets, pinned blocks.
inline void expect_idle(Engine& e) {
  const auto s = e.stats();
  EXPECT_EQ(s.jobs_in_flight, 0u);
  EXPECT_EQ(s.busy_slots, 0u);
  EXPECT_EQ(s.host_budget_in_use, 0u) << "budget still held";
  EXPECT_EQ(s.pinned_bytes_in_use, 0u);
  for (auto b : s.device_budget_in_use) EXPECT_EQ(b, 0u);
}

// Gives each partition's pageable input pages of its own (a copy in
// page-aligned memory), as CUDA registers whole pages: inputs that share a
// page cannot both be registered, and are staged instead.
struct PageAlignedInputs {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<std::byte, Free>> buffers;

  PageAlignedInputs(Job& job, const workloads::SyntheticRun& run) {
    for (std::size_t p = 0; p < job.partitions.size(); ++p) {
      const auto src = std::as_bytes(std::span(run.pageable_inputs[p]));
      auto* mem =
          static_cast<std::byte*>(std::aligned_alloc(4096, (src.size() + 4095) / 4096 * 4096));
      if (mem == nullptr) throw std::bad_alloc();
      std::copy(src.begin(), src.end(), mem);
      buffers.emplace_back(mem);
      job.partitions[p].inputs[0] = Input::pageable(std::span<const std::byte>(mem, src.size()));
    }
  }
  std::span<std::byte> of(std::size_t p, std::size_t bytes) const {
    return {buffers[p].get(), bytes};
  }
};

// The process's threads, from /proc (0 where there is none).
inline int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return 0;
}

// Every output word of a synthetic run against the CPU version.
inline void expect_outputs_correct(const workloads::SyntheticRun& run) {
  const auto& o = run.options;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    std::vector<std::uint32_t> in(o.input_bytes / 4), expect(o.input_bytes / 16);
    workloads::synthetic_fill(o.seed, p, in);
    workloads::synthetic_cpu(in.data(), expect.data(), expect.size(), o.rounds);
    ASSERT_EQ(std::vector<std::uint32_t>(run.outputs[p].begin(), run.outputs[p].end()), expect)
        << "partition " << p;
  }
}

}  // namespace stoker::test

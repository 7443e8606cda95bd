// Where the engine runs each device's threads (Config::bind_threads), on
// the host backend, whose devices can be given local CPUs.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "devices/cpu_set.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using devices::CpuSet;
using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::threads_named;

// Runs a pageable job on both devices of `engine` (so every device's
// staging threads have run) and returns, per device, the roles of its
// threads found ("feed", "kern", ...) with each thread's CPUs.
std::map<int, std::multimap<std::string, CpuSet>> run_and_list_threads(Engine& engine,
                                                                       asio::io_context& io) {
  workloads::SyntheticOptions o;
  o.partitions = 8;
  o.input_bytes = std::size_t{1} << 20;  // 16 staging chunks of 64 KiB
  o.rounds = 2;
  o.pageable = true;
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = workloads::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  EXPECT_FALSE(ec) << report.error;
  if (!ec) expect_outputs_correct(*run);
  expect_idle(engine);
  std::map<int, std::multimap<std::string, CpuSet>> out;
  for (const auto& [tid, name] : threads_named("stoker-")) {
    // "stoker-<role>-<device>"
    const auto dash = name.rfind('-');
    const std::string role = name.substr(7, dash - 7);
    out[std::stoi(name.substr(dash + 1))].emplace(role, CpuSet::of_thread(tid));
  }
  return out;
}

// A device given CPUs of its own (as a GPU's sysfs local_cpulist names its
// NUMA node's cores) has its feeder, both waiters and the staging threads
// that ran on exactly those CPUs; the launcher, which runs the jobs'
// callables (whose threads would inherit its mask), stays unbound.
TEST(ThreadPlacement, EachDevicesThreadsRunOnItsLocalCpus) {
  const CpuSet allowed = CpuSet::allowed();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 CPUs to give two devices one each";
  const CpuSet first({allowed.cpus()[0]}), second({allowed.cpus()[1]});
  asio::io_context io;
  auto c = host_config(2);
  c.staging_threads = 1;  // a local CPU for each staging thread
  c.devices.host.cpu_affinity = {first.to_string(), second.to_string()};
  Engine engine(io.get_executor(), c);
  EXPECT_EQ(engine.stats().device_cpus,
            (std::vector<std::string>{first.to_string(), second.to_string()}));
  const auto threads = run_and_list_threads(engine, io);
  ASSERT_EQ(threads.size(), 2u) << "threads of both devices, named by device";
  for (const auto& [device, roles] : threads) {
    const CpuSet& want = device == 0 ? first : second;
    for (const char* role : {"feed", "kern", "wait", "cwait", "stage"})
      EXPECT_GE(roles.count(role), 1u) << "device " << device << " has no " << role << " thread";
    for (const auto& [role, cpus] : roles)
      EXPECT_EQ(cpus.to_string(), (role == "kern" ? allowed : want).to_string())
          << "device " << device << "'s " << role << " thread";
  }
  EXPECT_EQ(CpuSet::allowed(), allowed) << "the caller's own thread was moved";
}

// Binding off, or a device whose CPUs are all the CPUs there are (one NUMA
// node), none of them allowed here, or fewer than its staging threads (a
// container allowing one of them): the threads stay where the caller's
// mask put them, and stats say they were not bound.
TEST(ThreadPlacement, ThreadsStayUnboundWhereBindingWouldNotHelp) {
  const CpuSet allowed = CpuSet::allowed();
  ASSERT_FALSE(allowed.empty());
  const std::string elsewhere = std::to_string(allowed.cpus().back() + 1);
  struct Case {
    std::string what;
    bool bind;
    std::vector<std::string> cpus;
  };
  const std::vector<Case> cases = {
      {"binding off", false, {std::to_string(allowed.cpus()[0]), ""}},
      {"every allowed CPU is local", true, {allowed.to_string(), allowed.to_string()}},
      {"no local CPU is allowed", true, {elsewhere, elsewhere}},
      {"local CPUs unknown", true, {}},
      {"fewer local CPUs than staging threads",
       true,
       {std::to_string(allowed.cpus()[0]), std::to_string(allowed.cpus()[0])}},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.what);
    asio::io_context io;
    auto c = host_config(2);
    c.staging_threads = 2;
    c.bind_threads = k.bind;
    c.devices.host.cpu_affinity = k.cpus;
    Engine engine(io.get_executor(), c);
    EXPECT_EQ(engine.stats().device_cpus, (std::vector<std::string>{"", ""}));
    for (const auto& [device, roles] : run_and_list_threads(engine, io))
      for (const auto& [role, cpus] : roles)
        EXPECT_EQ(cpus, allowed) << "device " << device << "'s " << role << " thread";
  }
}

TEST(ThreadPlacement, BindThreadsIsASettingOfItsOwn) {
  std::vector<std::string> args = {"--bind-threads", "off", "--keep"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_FALSE(c->bind_threads);
  EXPECT_EQ(args, std::vector<std::string>{"--keep"});
  args = {"--bind-threads=sometimes"};
  c = Config{}.apply_args(args);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().what().find("--bind-threads: 'sometimes' is not on or off"),
            std::string::npos)
      << c.error().what();
}

}  // namespace
}  // namespace stoker::engine

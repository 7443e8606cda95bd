// Workloads by name: the built-in ones are registered in order, a user's
// own registers beside them and a second of one name is refused; each
// built-in, built from option values, runs on the host backend and
// verifies; options a workload does not take, values outside their range
// and options that exclude each other are refused naming them.
#include "engine/workloads/workload_registry.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/engine/engine_test_util.hpp"

namespace stoker::engine::workloads {
namespace {

using test::host_config;
using test::run_job;

// A user's workload: copies one partition's bytes through, declaring one
// option with a default.
class Echo final : public Workload {
 public:
  explicit Echo(std::string name = "echo") : Workload(describe(std::move(name))) {}

  static Description describe(std::string name) {
    Description d;
    d.name = std::move(name);
    d.summary = "copies bytes through";
    d.partitions_default = "1";
    d.verification = "every byte came back";
    d.options = {WorkloadOption::integer("bytes", "B", 1, 4096, "64", "bytes per partition")};
    return d;
  }

 protected:
  Result<WorkloadJob> make_job(Engine&, const WorkloadRequest&,
                               const WorkloadValues& values) const override {
    const auto bytes = *values.number<std::size_t>("bytes");
    auto buffers = std::make_shared<std::pair<std::vector<std::byte>, std::vector<std::byte>>>(
        std::vector<std::byte>(bytes), std::vector<std::byte>(bytes));
    WorkloadJob out;
    Partition part;
    part.inputs.push_back(Input::pageable(buffers->first));
    part.outputs.push_back(Output::to(buffers->second));
    part.work = {test::copy_through, test::copy_through};
    out.job.partitions.push_back(std::move(part));
    out.run = buffers;
    return out;
  }
};

std::vector<std::string> names(const WorkloadRegistry& registry) {
  std::vector<std::string> out;
  for (const auto* w : registry.list()) out.push_back(w->name());
  return out;
}

TEST(WorkloadRegistry, HoldsTheBuiltInWorkloadsByNameDefaultFirst) {
  const auto& registry = workload_registry();
  const auto listed = names(registry);
  ASSERT_GE(listed.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(listed.begin(), listed.begin() + 4),
            (std::vector<std::string>{"groth16", "ntt_msm_h", "hpoly", "synthetic"}));
  for (const char* name : {"groth16", "ntt_msm_h", "hpoly", "synthetic"}) {
    const Workload* w = registry.find(name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->name(), name);
    EXPECT_FALSE(w->summary().empty()) << name;
  }
  EXPECT_EQ(registry.find("no_such_workload"), nullptr);
}

TEST(WorkloadRegistry, FindsAUsersWorkloadAfterTheBuiltIns) {
  WorkloadRegistry registry;
  ASSERT_FALSE(add_builtin_workloads(registry));
  ASSERT_FALSE(registry.add(std::make_unique<Echo>()));
  ASSERT_NE(registry.find("echo"), nullptr);
  EXPECT_EQ(registry.find("echo")->summary(), "copies bytes through");
  EXPECT_EQ(names(registry).back(), "echo");
  // One without a class of its own.
  ASSERT_FALSE(registry.add(make_workload(Echo::describe("echo_function"),
                                          [](Engine&, const WorkloadRequest&, const WorkloadValues&)
                                              -> Result<WorkloadJob> { return WorkloadJob{}; })));
  ASSERT_NE(registry.find("echo_function"), nullptr);
  EXPECT_EQ(registry.find("echo_function")->options()[0].name, "bytes");
}

TEST(WorkloadRegistry, RefusesASecondWorkloadOfOneNameNamingIt) {
  WorkloadRegistry registry;
  ASSERT_FALSE(registry.add(std::make_unique<Echo>()));
  const auto e = registry.add(std::make_unique<Echo>());
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("'echo'"), std::string::npos) << e.what();
  EXPECT_EQ(registry.list().size(), 1u) << "the first one stays";
  ASSERT_FALSE(add_builtin_workloads(registry));
  EXPECT_NE(add_builtin_workloads(registry).what().find("'groth16'"), std::string::npos);
}

TEST(Workload, RefusesADescriptionThatCannotWork) {
  auto twice = Echo::describe("twice");
  twice.options.push_back(WorkloadOption::flag("bytes", "again"));
  EXPECT_THROW(Echo{"Bad Name"}, std::invalid_argument);
  struct Twice : Workload {
    explicit Twice(Description d) : Workload(std::move(d)) {}
    Result<WorkloadJob> make_job(Engine&, const WorkloadRequest&,
                                 const WorkloadValues&) const override {
      return Error{Errc::invalid_argument};
    }
  };
  EXPECT_THROW(Twice{twice}, std::invalid_argument);
  auto bad_default = Echo::describe("bad_default");
  bad_default.options[0].default_value = "5000";
  EXPECT_THROW(Twice{bad_default}, std::invalid_argument);
}

// Small values of each built-in's options; the job runs on two emulated
// devices and every partition is checked.
TEST(Workload, EachBuiltInRunsOnTheHostBackendAndVerifies) {
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
      cases = {{"ntt_msm_h", {{"log-n", "5"}, {"keep-h", ""}}},
               {"hpoly", {{"log-n", "5"}, {"h-memory", "pageable"}}},
               {"synthetic", {{"size-mib", "1"}, {"rounds", "2"}}},
               {"groth16", {{"log-n", "5"}, {"public", "2"}}},
               {"groth16", {{"log-n", "4"}, {"key-format", "bellman"}}}};
  for (const auto& [name, options] : cases) {
    SCOPED_TRACE(name);
    boost::asio::io_context io;
    Engine engine(io.get_executor(), host_config());
    WorkloadRequest request;
    for (const auto& [option, value] : options) request.values.set(option, value);
    request.partitions = 3;
    request.seed = 7;
    auto built = workload_registry().find(name)->build(engine, request);
    ASSERT_TRUE(built) << built.error().what();
    EXPECT_EQ(built->job.partitions.size(), 3u);
    EXPECT_TRUE(built->verifies);
    EXPECT_TRUE(built->job.verify);
    EXPECT_EQ(built->banner.rfind(name + ", 3 partitions", 0), 0u) << built->banner;
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(built->job), ec);
    ASSERT_FALSE(ec) << report.error;
    EXPECT_EQ(report.partitions_done, 3u);
    if (built->all_verified) {
      EXPECT_TRUE(built->all_verified());
    }
    ASSERT_TRUE(built->fields);
    const auto fields = built->fields(true);
    ASSERT_FALSE(fields.empty());
    EXPECT_EQ(fields[0].key, "log_n");
  }
}

TEST(Workload, FillsInTheDeclaredDefaultsAndReadsAnAliasAsItsOption) {
  boost::asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  auto echo = Echo().build(engine, {});
  ASSERT_TRUE(echo) << echo.error().what();
  EXPECT_EQ(echo->job.partitions[0].inputs[0].bytes, 64u) << "the declared default";

  WorkloadRequest request;
  request.values.set("log-n", "3");
  request.values.set("output-memory", "pageable");  // hpoly's other name for --h-memory
  auto hpoly = workload_registry().find("hpoly")->build(engine, request);
  ASSERT_TRUE(hpoly) << hpoly.error().what();
  EXPECT_NE(hpoly->banner.find("h in pageable memory"), std::string::npos) << hpoly->banner;
}

TEST(Workload, RefusesOptionsItDoesNotTakeNamingThemAndTheWorkload) {
  const Workload& hpoly = *workload_registry().find("hpoly");
  WorkloadValues values;
  values.set("log-n", "4");
  values.set("keep-h");
  const auto e = hpoly.check(values);
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_EQ(e.what(), "--keep-h is not an option of workload hpoly");
  boost::asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  WorkloadRequest request;
  request.values = values;
  const auto built = hpoly.build(engine, request);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().what(), e.what()) << "build checks first";
}

TEST(Workload, RefusesValuesOutsideTheirRangeOrChoicesNamingThem) {
  const auto problem = [](const char* workload, const char* option, const char* value) {
    WorkloadValues values;
    values.set(option, value);
    return workload_registry().find(workload)->check(values).what();
  };
  EXPECT_EQ(problem("ntt_msm_h", "log-n", "1"), "--log-n 1: ntt_msm_h needs at least 2");
  EXPECT_EQ(problem("hpoly", "log-n", "29"), "--log-n 29: hpoly needs at most 28");
  EXPECT_EQ(problem("hpoly", "log-n", "x"), "--log-n: 'x' is not an integer in 1..28");
  EXPECT_EQ(problem("synthetic", "rounds", "-1"),
            "--rounds: '-1' is not an integer in 0..2147483647");
  EXPECT_EQ(problem("synthetic", "output-memory", "pinned"),
            "--output-memory: 'pinned' is not registered or pageable");
  EXPECT_EQ(problem("ntt_msm_h", "keep-h", "yes"), "--keep-h takes no value");
  WorkloadValues fine;
  fine.set("log-n", "2");
  EXPECT_FALSE(workload_registry().find("ntt_msm_h")->check(fine));
}

TEST(Workload, RefusesTwoNamesOfOneOptionAndExclusiveOptions) {
  WorkloadValues h;
  h.set("h-memory", "pageable");
  h.set("output-memory", "registered");
  EXPECT_EQ(workload_registry().find("hpoly")->check(h).what(),
            "--h-memory and --output-memory: give one of them, not both");
  WorkloadValues inputs;
  inputs.set("registered");
  inputs.set("pageable");
  EXPECT_EQ(workload_registry().find("synthetic")->check(inputs).what(),
            "--registered and --pageable: give one of them, not both");
}

}  // namespace
}  // namespace stoker::engine::workloads

// stoker run's workload options come from the registry: the workload is
// the one named, else the one the options imply, else the first; an option
// the workload does not take is refused naming the workloads that take it;
// numbers are read within the widest range, then the workload's own; a
// workload a program adds is offered and described like the built-ins.
#include "tools/commands/run_workload_options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/workloads/workload_registry.hpp"

namespace stoker::tools {
namespace {

using engine::workloads::Workload;
using engine::workloads::WorkloadOption;

// The built-ins and a user's "scale" workload with one option of its own.
std::vector<const Workload*> registered() {
  static engine::workloads::WorkloadRegistry registry;
  if (registry.list().empty()) {
    engine::workloads::add_builtin_workloads(registry);
    Workload::Description d;
    d.name = "scale";
    d.summary = "multiplies floats";
    d.partitions_default = "4 per GPU, 8 on the host backend";
    d.verification = "every float equals the CPU's";
    d.options = {WorkloadOption::integer("factor", "F", 1, 100, "3", "the factor")};
    registry.add(engine::workloads::make_workload(
        d,
        [](engine::Engine&, const engine::workloads::WorkloadRequest&,
           const engine::workloads::WorkloadValues&) -> Result<engine::workloads::WorkloadJob> {
          return Error{Errc::invalid_argument};
        }));
  }
  return registry.list();
}

struct Parsed {
  std::optional<int> rc;  // of parse: set on a usage error
  Result<RunWorkloadOptions::Choice> choice = Error{Errc::invalid_argument, "not parsed"};
};

Parsed parse(const std::vector<std::string>& args) {
  RunWorkloadOptions options(registered());
  CommandLine cl("run", "");
  std::string workload;
  options.declare(cl, workload);
  Parsed p;
  p.rc = cl.parse(args);
  if (!p.rc) p.choice = options.choose(cl, workload);
  return p;
}

std::string chosen(const std::vector<std::string>& args) {
  const auto p = parse(args);
  if (!p.choice) return "error: " + p.choice.error().what();
  return p.choice->workload->name();
}

TEST(RunWorkloadOptions, ChoosesTheNamedWorkloadElseTheImpliedElseTheFirst) {
  EXPECT_EQ(chosen({}), "groth16");
  EXPECT_EQ(chosen({"--log-n", "6"}), "groth16") << "ntt_msm_h and hpoly take --log-n too";
  EXPECT_EQ(chosen({"--h-memory", "pageable"}), "hpoly");
  EXPECT_EQ(chosen({"--rounds", "3"}), "synthetic");
  EXPECT_EQ(chosen({"--factor", "5"}), "scale");
  EXPECT_EQ(chosen({"--workload", "hpoly", "--log-n", "6"}), "hpoly");
}

TEST(RunWorkloadOptions, RefusesAnOptionTheWorkloadDoesNotTakeNamingThoseThatDo) {
  EXPECT_EQ(chosen({"--workload", "synthetic", "--log-n", "6"}),
            "error: --log-n applies to --workload groth16, ntt_msm_h or hpoly, not synthetic");
  EXPECT_EQ(chosen({"--workload", "hpoly", "--keep-h"}),
            "error: --keep-h applies to --workload ntt_msm_h, not hpoly");
  EXPECT_EQ(chosen({"--output-memory", "registered"}),
            "error: --output-memory applies to --workload hpoly or synthetic, not groth16");
  EXPECT_EQ(chosen({"--factor", "2", "--keep-h"}),
            "error: --keep-h applies to --workload ntt_msm_h, not scale");
}

TEST(RunWorkloadOptions, ReadsNumbersInTheWidestRangeThenTheWorkloadsOwn) {
  EXPECT_EQ(parse({"--log-n", "0"}).rc, 2) << "outside 1..28: a parse error";
  EXPECT_EQ(chosen({"--log-n", "1"}), "error: --log-n 1: groth16 needs at least 2");
  EXPECT_EQ(chosen({"--workload", "hpoly", "--log-n", "1"}), "hpoly");
  EXPECT_EQ(parse({"--factor", "101"}).rc, 2);
  const auto p = parse({"--workload", "hpoly", "--output-memory", "pageable"});
  ASSERT_TRUE(p.choice) << p.choice.error().what();
  EXPECT_EQ(p.choice->values.text("output-memory"), "pageable") << "as given";
}

TEST(RunWorkloadOptions, HelpOffersAndDescribesEveryWorkload) {
  RunWorkloadOptions options(registered());
  EXPECT_EQ(options.workload_help(),
            "  --workload W        groth16 (default), ntt_msm_h, hpoly, synthetic or scale\n");
  EXPECT_NE(options.partitions_help().find("groth16, ntt_msm_h, hpoly and scale 4 per"),
            std::string::npos)
      << options.partitions_help();
  EXPECT_NE(options.verify_help().find("scale: every float equals the CPU's"), std::string::npos);
  const auto sections = options.sections_help();
  for (const char* line :
       {"scale (implied by --factor): multiplies floats\n",
        "  --factor F          the factor (default 3)\n", "  --keep-h            bring h back too",
        "--output-memory M says the same"})
    EXPECT_NE(sections.find(line), std::string::npos) << line << " in\n" << sections;
  for (const auto& line : std::vector<std::string>{options.verify_help(), sections})
    for (std::size_t start = 0, end; start < line.size(); start = end + 1) {
      end = line.find('\n', start);
      EXPECT_LE(end - start, 96u) << line.substr(start, end - start);
    }
}

}  // namespace
}  // namespace stoker::tools

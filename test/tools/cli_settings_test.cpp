// The engine's settings and the GPU a command runs on, as the stoker binary
// reads them: one range per setting, a usage error (exit 2) naming the
// option or the STOKER_* variable for anything the command line or a
// variable gets wrong, on its face or for this machine, and an option that
// beats its variable.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "test/tools/stoker_process.hpp"

namespace {

using stoker::test::has;
using stoker::test::run_stoker;

TEST(CliSettings, SlowdownHasOneRangeNamedByTheOptionOrTheVariable) {
  const auto option = run_stoker("run --backend host --slowdown 1001");
  EXPECT_EQ(option.status, 2) << option.both();
  EXPECT_TRUE(has(option.err, "stoker run: --slowdown: '1001' is not a number in 1..1000"))
      << option.both();
  const auto variable = run_stoker("run --backend host", "STOKER_HOST_SLOWDOWN=1001");
  EXPECT_EQ(variable.status, 2) << variable.both();
  EXPECT_TRUE(has(variable.err, "STOKER_HOST_SLOWDOWN: '1001' is not a number in 1..1000"))
      << variable.both();
  // 1000 is in the range: the run goes on to its next check (a synthetic job
  // takes no --log-n).
  const auto top = run_stoker("run --backend host --slowdown 1000 --workload synthetic --log-n 4");
  EXPECT_EQ(top.status, 2) << top.both();
  EXPECT_FALSE(has(top.err, "slowdown")) << top.both();
}

// What this machine cannot do of what the engine settings ask is a usage
// error like any other bad value, named by where it was asked.
TEST(CliSettings, DevicesTheMachineLacksAreUsageErrorsNamingTheOptionOrTheVariable) {
  for (const char* cmd : {"run --no-progress", "stress --jobs 1 --quiet", "bench pipeline"}) {
    for (const auto& [args, env, message] :
         {std::tuple{"--backend host --devices 7", "",
                     "--devices: names CUDA devices, but the backend is the host's"},
          {"--backend host", "STOKER_DEVICES=7",
           "STOKER_DEVICES: names CUDA devices, but the backend is the host's"},
          {"--backend host --slowdown 1,2,3,4", "",
           "--slowdown: 4 slowdown factors for 1 host device"},
          {"--backend host --host-devices 2", "STOKER_HOST_SLOWDOWN=1,2,3",
           "STOKER_HOST_SLOWDOWN: 3 slowdown factors for 2 host devices"}}) {
      const auto r = run_stoker(std::string(cmd) + " " + args, env);
      EXPECT_EQ(r.status, 2) << env << " " << cmd << " " << args << ": " << r.both();
      EXPECT_TRUE(has(r.err, message)) << env << " " << cmd << " " << args << ": " << r.both();
    }
    // Without a GPU, cuda is what the machine lacks; with one, the host
    // backend's setting is what does not apply.
    const auto cuda = run_stoker(std::string(cmd) + " --backend cuda --host-devices 2");
    EXPECT_EQ(cuda.status, 2) << cmd << ": " << cuda.both();
    EXPECT_TRUE(has(cuda.err, "--backend: 'cuda', but this machine has no CUDA device") ||
                has(cuda.err, "--host-devices: sets the host backend, but the backend is CUDA"))
        << cmd << ": " << cuda.both();
    const auto cuda_env = run_stoker(std::string(cmd), "STOKER_BACKEND=cuda STOKER_HOST_DEVICES=2");
    EXPECT_EQ(cuda_env.status, 2) << cmd << ": " << cuda_env.both();
    EXPECT_TRUE(has(cuda_env.err, "STOKER_BACKEND: 'cuda', but this machine has no CUDA") ||
                has(cuda_env.err, "STOKER_HOST_DEVICES: sets the host backend"))
        << cmd << ": " << cuda_env.both();
  }
}

// Every command that runs on one GPU says the same of a GPU this machine
// lacks, with the same status.
TEST(CliSettings, AGpuTheMachineLacksIsTheSameUsageErrorInEveryCommand) {
  for (const char* cmd :
       {"msm --points p --scalars s --out o", "srs generate --log-n 4 --seed 1 --out o",
        "ntt --log-n 4 --in x --out y", "hpoly --a a --b b --c c --out h", "bench ntt --log-n 4",
        "bench hpoly --log-n 4", "bench msm"}) {
    const auto r = run_stoker(std::string(cmd) + " --device 999");
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.both();
    EXPECT_TRUE(has(r.err, "--device 999: this machine has ")) << cmd << ": " << r.both();
  }
}

// A setting given as an option is taken from it; its variable is not read,
// so a bad one does not fail the run.
TEST(CliSettings, AnOptionBeatsItsVariable) {
  const std::string job =
      "run --backend host --workload synthetic --partitions 1 --size-mib 1 --no-progress";
  for (const auto& [option, env] : {std::pair{"--workers 2", "STOKER_WORKERS=0"},
                                    {"--devices 0", "STOKER_DEVICES=,,,"},
                                    {"--chunk-kib 128", "STOKER_CHUNK_MIB=0 STOKER_CHUNK_KIB=1"},
                                    {"--slowdown 1", "STOKER_HOST_SLOWDOWN=1001"}}) {
    const bool devices = std::string(option) == "--devices 0";
    const auto r = run_stoker(job + " " + option, env);
    if (devices) {
      // The option is read (and names itself), the variable is not.
      EXPECT_TRUE(has(r.err, "--devices: names CUDA devices") || r.status == 0) << r.both();
      EXPECT_FALSE(has(r.err, "STOKER_DEVICES")) << r.both();
    } else {
      EXPECT_EQ(r.status, 0) << option << " " << env << ": " << r.both();
    }
  }
  const auto without = run_stoker(job, "STOKER_WORKERS=0");
  EXPECT_EQ(without.status, 2) << without.both();
  EXPECT_TRUE(has(without.err, "STOKER_WORKERS: '0' is not an integer in 1..1024"))
      << without.both();
}

}  // namespace

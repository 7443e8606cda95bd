// The stoker binary as a user runs it. `stoker ntt` and `stoker hpoly`: files
// of canonical elements in, a file out, and for bad input an exit status, a
// message that names the problem, and no output file left behind (on the CPU
// without a GPU, on the GPU where there is one). Every command: --help, and
// unknown or bad options named before any device is touched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

// r, little-endian bytes.
std::array<std::uint8_t, 32> modulus_bytes() {
  const std::uint64_t limbs[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull,
                                  0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
  std::array<std::uint8_t, 32> out{};
  for (int i = 0; i < 32; ++i) out[i] = static_cast<std::uint8_t>(limbs[i / 8] >> (8 * (i % 8)));
  return out;
}

struct Run {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Run run_command(const std::string& cmd_line) {
  Run r;
  const std::string cmd = cmd_line + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;)
    r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Run run_stoker(const std::string& args) {
  return run_command(std::string(STOKER_BINARY) + " " + args);
}

class KernelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // `count` random canonical elements (top byte below r's, so each is < r).
  std::string write_random(const std::string& name, std::size_t count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint8_t> bytes(count * 32);
    for (std::size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<std::uint8_t>(i % 32 == 31 ? rng() % 0x73 : rng());
    return write(name, bytes);
  }
  std::string write(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }
  std::vector<std::uint8_t> read(const std::string& file) const {
    std::ifstream f(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }

  fs::path dir_;
};

TEST_F(KernelCli, NttThenInverseGivesTheInputBack) {
  const auto in = write_random("x.bin", 1024, 1);
  ASSERT_EQ(run_stoker("ntt --log-n 10 --in " + in + " --out " + path("y.bin")).status, 0);
  ASSERT_EQ(fs::file_size(path("y.bin")), 32u * 1024);
  EXPECT_NE(read(path("y.bin")), read(in));
  const auto back =
      run_stoker("ntt --log-n 10 --inverse --in " + path("y.bin") + " --out " + path("z.bin"));
  ASSERT_EQ(back.status, 0) << back.output;
  EXPECT_EQ(read(path("z.bin")), read(in));
}

TEST_F(KernelCli, WrongSizeIsNamedAndNoOutputIsLeft) {
  const auto in = write_random("x.bin", 16, 2);
  const auto r = run_stoker("ntt --log-n 5 --in " + in + " --out " + path("y.bin"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("size is 512 bytes, expected 32 * 2^5 = 1024"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("y.bin")));
}

TEST_F(KernelCli, ElementNotBelowRIsNamedByIndex) {
  auto bytes = std::vector<std::uint8_t>(32 * 16, 0);
  const auto r_bytes = modulus_bytes();
  std::copy(r_bytes.begin(), r_bytes.end(), bytes.begin() + 32 * 5);
  const auto in = write("x.bin", bytes);
  const auto r = run_stoker("ntt --log-n 4 --in " + in + " --out " + path("y.bin"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("element 5 is not below r"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("y.bin")));
}

TEST_F(KernelCli, HpolyRejectsMismatchedAndMalformedFiles) {
  const auto a = write_random("a.bin", 16, 3), b = write_random("b.bin", 32, 4);
  const auto mismatch =
      run_stoker("hpoly --a " + a + " --b " + b + " --c " + a + " --out " + path("h.bin"));
  EXPECT_EQ(mismatch.status, 1);
  EXPECT_NE(mismatch.output.find("size mismatch"), std::string::npos) << mismatch.output;
  const auto odd = write("odd.bin", std::vector<std::uint8_t>(100, 1));
  const auto malformed =
      run_stoker("hpoly --a " + odd + " --b " + odd + " --c " + odd + " --out " + path("h.bin"));
  EXPECT_EQ(malformed.status, 1);
  EXPECT_NE(malformed.output.find("not 32 * 2^K"), std::string::npos) << malformed.output;
  EXPECT_FALSE(fs::exists(path("h.bin")));
}

TEST_F(KernelCli, HelpAndUnknownArguments) {
  for (const char* cmd : {"ntt", "hpoly", "bench ntt", "bench hpoly"}) {
    const auto help = run_stoker(std::string(cmd) + " --help");
    EXPECT_EQ(help.status, 0) << cmd;
    EXPECT_NE(help.output.find("usage: stoker"), std::string::npos) << cmd << ": " << help.output;
    const auto bad = run_stoker(std::string(cmd) + " --no-such-option");
    EXPECT_EQ(bad.status, 2) << cmd;
    EXPECT_NE(bad.output.find("unknown option '--no-such-option'"), std::string::npos)
        << bad.output;
  }
}

// --device N picks the GPU of every kernel command; --device with --cpu and
// a GPU this machine lacks are usage errors (2), named before any work.
TEST_F(KernelCli, DeviceOptionIsCheckedAgainstTheGpusThere) {
  for (const char* cmd :
       {"ntt --log-n 4 --in x --out y", "bench ntt --log-n 4", "bench hpoly --log-n 4"}) {
    const auto both = run_stoker(std::string(cmd) + " --cpu --device 0");
    EXPECT_EQ(both.status, 2) << cmd;
    EXPECT_NE(both.output.find("--cpu and --device: give one of them, not both"), std::string::npos)
        << both.output;
    const auto missing = run_stoker(std::string(cmd) + " --device 999");
    EXPECT_EQ(missing.status, 2) << cmd;
    EXPECT_NE(missing.output.find("--device 999: this machine has "), std::string::npos)
        << missing.output;
  }
}

TEST(Cli, EngineCommandsNameBadOptionsBeforeTouchingADevice) {
  for (const char* cmd : {"run", "stress", "bench pipeline"}) {
    const auto help = run_stoker(std::string(cmd) + " --help");
    EXPECT_EQ(help.status, 0) << cmd;
    EXPECT_NE(help.output.find("--pageable-inputs stage|register"), std::string::npos)
        << cmd << " does not list the engine options: " << help.output;
    const auto bad = run_stoker(std::string(cmd) + " --pageable-inputs pin");
    EXPECT_EQ(bad.status, 2) << cmd << ": " << bad.output;
    EXPECT_NE(bad.output.find("--pageable-inputs: 'pin' is not stage or register"),
              std::string::npos)
        << cmd << ": " << bad.output;
  }
  const auto variants = run_stoker("bench pipeline --variants a,z");
  EXPECT_EQ(variants.status, 2);
  EXPECT_NE(variants.output.find("--variants takes a, b, c, b1, not 'z'"), std::string::npos)
      << variants.output;
}

// A number an option cannot take is refused, naming the option, the value
// and the range, before anything runs: not read as 0, the default or a
// wrapped value. bench pipeline answers this on a host without a GPU too.
TEST(Cli, RunAndBenchPipelineRefuseBadNumbersNamingTheOption) {
  for (const std::string cmd : {"run --backend host", "bench pipeline"})
    for (const auto& [option, value, range] :
         {std::tuple{"--partitions", "abc", "1..18446744073709551615"},
          {"--size-mib", "-1", "1..17592186044415"},
          {"--rounds", "x", "0..2147483647"},
          {"--rounds", "16k", "0..2147483647"}}) {
      const auto r = run_stoker(cmd + " " + option + " " + value);
      EXPECT_EQ(r.status, 2) << cmd << " " << option << " " << value << ": " << r.output;
      EXPECT_NE(
          r.output.find(std::string(option) + ": '" + value + "' is not an integer in " + range),
          std::string::npos)
          << cmd << ": " << r.output;
    }
  const auto reps = run_stoker("bench pipeline --reps x");
  EXPECT_EQ(reps.status, 2) << reps.output;
  EXPECT_NE(reps.output.find("--reps: 'x' is not an integer in 1..1000"), std::string::npos)
      << reps.output;
}

TEST(Cli, RunAndBenchPipelineRefuseNumbersOutOfRange) {
  for (const auto& [args, message] :
       {std::pair{"run --backend host --workload synthetic --rounds 3000000000",
                  "--rounds: '3000000000' is not an integer in 0..2147483647"},
        {"run --backend host --seed 18446744073709551616",
         "--seed: '18446744073709551616' is not an integer in 0..18446744073709551615"},
        {"run --backend host --partitions 0", "--partitions: '0' is not an integer in 1.."},
        {"bench pipeline --rounds 3000000000",
         "--rounds: '3000000000' is not an integer in 0..2147483647"},
        {"bench pipeline --reps 0", "--reps: '0' is not an integer in 1..1000"},
        {"bench pipeline --writers 5000", "--writers: '5000' is not an integer in 0..4096"}}) {
    const auto r = run_stoker(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
  }
}

// The other commands read their numbers the same way: each of these was
// once taken as something else (5, 1, 1 second) and run.
TEST(Cli, OtherCommandsRefuseBadNumbersNamingTheOption) {
  for (const auto& [args, message] : {std::pair{"bench ntt --cpu --log-n 4 --reps 5x",
                                                "--reps: '5x' is not an integer in 1..2147483647"},
                                      {"stress --backend host --jobs 1 --submitters 4294967297",
                                       "--submitters: '4294967297' is not an integer in 1..64"},
                                      {"bench alloc --backend host --quick --seconds 0.01s",
                                       "--seconds: '0.01s' is not a number in 0.001..60"}}) {
    const auto r = run_stoker(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
  }
}

// --trace FILE is checked before the job runs: a path that cannot be
// written (a missing directory, a device) is named, with the reason, before
// any work (exit 2), and a run that ends early leaves the path as it was.
TEST(Cli, TraceFileIsCheckedBeforeTheJobAndLeftAsItWasWhenTheRunEndsEarly) {
  const std::string job =
      "run --backend host --workload synthetic --partitions 2 --size-mib 1 --no-progress";
  const auto missing = run_stoker(job + " --trace /nonexistent-dir/x.json");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot write /nonexistent-dir/x.json: directory "
                                "/nonexistent-dir: No such file or directory"),
            std::string::npos)
      << missing.output;
  EXPECT_EQ(missing.output.find("stoker run: synthetic"), std::string::npos)
      << "the job ran before the trace file was checked: " << missing.output;

  const auto full = run_stoker(job + " --trace /dev/full");
  EXPECT_EQ(full.status, 2) << full.output;
  EXPECT_NE(full.output.find("/dev/full: is a character device, not a regular file"),
            std::string::npos)
      << full.output;

  const fs::path ok =
      fs::temp_directory_path() / ("stoker_cli_trace_" + std::to_string(::getpid()) + ".json");
  const auto written = run_stoker(job + " --trace " + ok.string());
  EXPECT_EQ(written.status, 0) << written.output;
  std::ifstream f(ok);
  const std::string trace{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  EXPECT_EQ(trace.rfind("{\"traceEvents\":[", 0), 0u) << trace.substr(0, 200);
  fs::remove(ok);

  // A run that ends before its job (here: a job that cannot be built)
  // leaves the path as it was: no empty file that a viewer cannot open,
  // and a file that was there keeps its bytes.
  const std::string unbuildable =
      "run --backend host --workload synthetic --size-mib 4 --log-n 4 --trace ";
  const auto early = run_stoker(unbuildable + ok.string());
  EXPECT_EQ(early.status, 2) << early.output;
  EXPECT_FALSE(fs::exists(ok)) << "an early exit left " << ok << " behind";
  std::ofstream(ok) << "earlier trace";
  EXPECT_EQ(run_stoker(unbuildable + ok.string()).status, 2);
  std::ifstream kept(ok);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), std::istreambuf_iterator<char>()),
            "earlier trace");
  fs::remove(ok);

  const auto bench = run_stoker("bench pipeline --trace /nonexistent-dir/x.json");
  EXPECT_EQ(bench.status, 2) << bench.output;
  EXPECT_NE(bench.output.find("cannot write /nonexistent-dir/x.json: directory "
                              "/nonexistent-dir: No such file or directory"),
            std::string::npos)
      << bench.output;
}

// --cold leaves the pools to the job, as an application's first job finds
// them: the run says the pinned pool grew during the job, which a warmed
// run does not.
TEST(Cli, ColdRunLeavesPoolGrowthToTheJobAndSaysSo) {
  const std::string job = "run --backend host --workload synthetic --partitions 4 --no-progress";
  const auto warm = run_stoker(job);
  EXPECT_EQ(warm.status, 0) << warm.output;
  EXPECT_NE(warm.output.find("pinned pool: "), std::string::npos) << warm.output;
  EXPECT_EQ(warm.output.find("pinned pool grew during the job"), std::string::npos) << warm.output;
  const auto cold = run_stoker(job + " --cold");
  EXPECT_EQ(cold.status, 0) << cold.output;
  EXPECT_NE(cold.output.find("cold: no pinned pool or device pool reserved ahead"),
            std::string::npos)
      << cold.output;
  EXPECT_NE(cold.output.find("pinned pool grew during the job"), std::string::npos) << cold.output;
  EXPECT_NE(cold.output.find("verified: every partition matches the CPU version"),
            std::string::npos)
      << cold.output;
  const auto json = run_stoker(job + " --cold --json");
  EXPECT_NE(json.output.find("\"cold\":true"), std::string::npos) << json.output;
}

// Where a run's outputs land is a setting of its own: registered outputs
// (written in place by the D2H) still verify, and a bad value is named.
TEST(Cli, RunPutsOutputsInRegisteredMemoryWhenAsked) {
  const auto ok = run_stoker(
      "run --backend host --workload synthetic --registered --output-memory registered "
      "--verify --json --no-progress");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("\"verified\":true"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("\"output_memory\":\"registered\""), std::string::npos) << ok.output;
  const auto bad = run_stoker("run --backend host --workload synthetic --output-memory pinned");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("--output-memory: 'pinned' is not registered or pageable"),
            std::string::npos)
      << bad.output;
}

// --out goes through OutputFile: a symlink is written through and stays a
// link; a FIFO or a directory at the path is refused naming what it is and
// left as it was (before any work: the FIFO is never opened); a missing
// directory is named with the reason.
TEST_F(KernelCli, OutWritesThroughSymlinksAndRefusesWhatIsNotARegularFile) {
  const auto in = write_random("x.bin", 16, 7);
  const std::string ntt = "ntt --cpu --log-n 4 --in " + in + " --out ";
  ASSERT_EQ(run_stoker(ntt + path("plain.bin")).status, 0);

  std::ofstream(path("target.bin")) << "old";
  fs::create_symlink("target.bin", path("link.bin"));
  const auto linked = run_stoker(ntt + path("link.bin"));
  ASSERT_EQ(linked.status, 0) << linked.output;
  EXPECT_TRUE(fs::is_symlink(path("link.bin")));
  EXPECT_EQ(read(path("target.bin")), read(path("plain.bin")));

  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const auto fifo = run_stoker(ntt + path("fifo"));
  EXPECT_EQ(fifo.status, 2) << fifo.output;
  EXPECT_NE(fifo.output.find(path("fifo") + ": is a FIFO, not a regular file"), std::string::npos)
      << fifo.output;
  EXPECT_TRUE(fs::is_fifo(path("fifo")));

  fs::create_directories(path("dir"));
  const auto dir = run_stoker(ntt + path("dir"));
  EXPECT_EQ(dir.status, 2) << dir.output;
  EXPECT_NE(dir.output.find("is a directory"), std::string::npos) << dir.output;
  EXPECT_TRUE(fs::is_directory(path("dir")));

  const auto missing = run_stoker(ntt + path("no/such/dir/y.bin"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("No such file or directory"), std::string::npos) << missing.output;

  const auto hpoly =
      run_stoker("hpoly --cpu --a " + in + " --b " + in + " --c " + in + " --out " + path("fifo"));
  EXPECT_EQ(hpoly.status, 2) << hpoly.output;
  EXPECT_TRUE(fs::is_fifo(path("fifo")));
}

// Every option takes --opt=value as well as --opt value.
TEST_F(KernelCli, EveryOptionTakesAnEqualsSign) {
  const auto in = write_random("x.bin", 16, 8);
  const auto ntt = run_stoker("ntt --cpu --log-n=4 --in=" + in + " --out=" + path("y.bin"));
  EXPECT_EQ(ntt.status, 0) << ntt.output;
  const auto bench = run_stoker("bench ntt --cpu --log-n=4 --reps=1 --json");
  EXPECT_EQ(bench.status, 0) << bench.output;
  const auto run = run_stoker(
      "run --backend=host --workload=synthetic --partitions=2 --size-mib=1 --rounds=1 "
      "--seed=3 --no-progress --trace=" +
      path("t.json"));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(fs::exists(path("t.json")));
  const auto stress = run_stoker("stress --backend=host --jobs=2 --submitters=1 --quiet");
  EXPECT_EQ(stress.status, 0) << stress.output;
  const auto flag = run_stoker("info --json=yes");
  EXPECT_EQ(flag.status, 2) << flag.output;
  EXPECT_NE(flag.output.find("--json takes no value"), std::string::npos) << flag.output;
}

// An option is never taken as the value of the one before it: `run --trace
// --json` once wrote a trace file named --json.
TEST_F(KernelCli, AValueOptionRefusesAFollowingOption) {
  const std::string cd = "cd " + dir_.string() + " && ";
  for (const char* cmd : {"run --backend host --trace --json", "ntt --cpu --in --out x",
                          "stress --backend host --seed --json"}) {
    const auto r = run_command(cd + STOKER_BINARY + " " + cmd);
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("needs a value, not the option '--"), std::string::npos)
        << cmd << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "--json"));
  EXPECT_FALSE(fs::exists(dir_ / "--out"));
}

// An option given twice, or two that contradict each other, are refused
// rather than the last one winning.
TEST(Cli, RepeatedAndConflictingOptionsAreRefused) {
  for (const auto& [args, message] :
       {std::pair{"run --backend host --verify --no-verify",
                  "--verify and --no-verify: give one of them, not both"},
        {"run --backend host --log-n 10 --log-n 12", "--log-n is given twice"},
        {"run --backend host --depth 3 --depth=4", "--depth is given twice"},
        {"run --backend host --chunk-mib 2 --chunk-kib 128", "give one of them, not both"},
        {"run --backend host --output-memory pageable --h-memory registered",
         "give one of them, not both"},
        {"stress --backend host --jobs 1 --jobs 2", "--jobs is given twice"},
        {"ntt --inverse --inverse --log-n 4 --in x --out y", "--inverse is given twice"},
        {"info --json --json", "--json is given twice"}}) {
    const auto r = run_stoker(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
  }
}

// Zero (or a value no run could mean) is refused naming the range, never
// read as "the default" in silence or left to abort the run.
TEST(Cli, ZeroAndAbsurdBoundsAreRefused) {
  for (const auto& [args, message] :
       {std::pair{"stress --backend host --stall-s 0", "--stall-s: '0' is not a number in 1.."},
        {"stress --backend host --duration 0", "--duration: '0' is not a number in 0.001.."},
        {"stress --backend host --jobs 0", "--jobs: '0' is not an integer in 1.."},
        {"stress --backend host --in-flight 0", "--in-flight: '0' is not an integer in 1.."},
        {"stress --backend host --duration 1e300", "--duration: '1e300' is not a number in"},
        {"run --backend host --host-budget-mib 0",
         "--host-budget-mib: '0' is not an integer in 1.."},
        {"run --backend host --workers 0", "--workers: '0' is not an integer in 1..1024"},
        {"run --backend host --devices ,,,",
         "--devices: ',,,' is not a list of CUDA device ordinals"}}) {
    const auto r = run_stoker(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
  }
}

// A bad STOKER_* variable is refused by every engine command, naming the
// variable and its value.
TEST(Cli, BadVariablesAreNamed) {
  for (const auto& [env, message] :
       {std::pair{"STOKER_DEVICES=,,,", "STOKER_DEVICES: ',,,' is not a list"},
        {"STOKER_STAGING_COPY=garbage", "STOKER_STAGING_COPY: 'garbage' is not auto or memcpy"},
        {"STOKER_PIPELINE_DEPTH=1", "STOKER_PIPELINE_DEPTH: '1' is not an integer in 2..16"},
        {"STOKER_HOST_BUDGET_MIB=0", "STOKER_HOST_BUDGET_MIB: '0' is not an integer in 1.."},
        {"STOKER_CHUNK_MIB=8x", "STOKER_CHUNK_MIB: '8x' is not an integer in 1.."}})
    for (const char* cmd :
         {"run --backend host", "stress --backend host --jobs 1", "bench pipeline"}) {
      const auto r = run_command(std::string(env) + " " + STOKER_BINARY + " " + cmd);
      EXPECT_EQ(r.status, 2) << env << " " << cmd << ": " << r.output;
      EXPECT_NE(r.output.find(message), std::string::npos) << env << " " << cmd << ": " << r.output;
    }
}

// The same exit status for the same kind of problem in every command: 2
// for a usage error, including devices this machine does not have, 1 for a
// failure while running.
TEST(Cli, ExitStatusMeansTheSameInEveryCommand) {
  for (const char* cmd : {"run --no-progress", "stress --jobs 1 --quiet"}) {
    const auto r = run_stoker(std::string(cmd) + " --backend host --devices 5");
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.output;
  }
  for (const char* cmd : {"run", "info", "doctor", "ntt", "hpoly", "msm", "stress", "bench alloc",
                          "bench ntt", "bench hpoly", "bench pipeline", "bench msm"}) {
    const auto r = run_stoker(std::string(cmd) + " --no-such-option");
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.output;
  }
  EXPECT_EQ(run_stoker("no-such-command").status, 2);
  EXPECT_EQ(run_stoker("bench no-such-bench").status, 2);
}

// bench msm's shaping switches: values out of range and switches that do
// not go together are usage errors naming the switch, before any device
// is asked for.
TEST(Cli, BenchMsmNamesItsUsageErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"--reduce-fold 0", "--reduce-fold"},
      {"--reduce-fold 7", "--reduce-fold"},
      {"--bucket-batch 64 --rest-buckets mixed", "--rest-buckets mixed"},
      {"--bucket-threads 0", "--bucket-threads"},
      {"--ones-start later", "--ones-start"},
      {"--rest-buckets fast", "--rest-buckets"}};
  for (const auto& [args, names] : cases) {
    const auto r = run_stoker(std::string("bench msm ") + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(names), std::string::npos) << args << ": " << r.output;
  }
}

// --help answers for every command and every benchmark, and for `stoker
// bench` itself, with status 0 and a usage line.
TEST(Cli, EveryCommandAnswersHelp) {
  for (const char* cmd :
       {"", "bench", "run", "info", "doctor", "ntt", "hpoly", "msm", "stress", "bench alloc",
        "bench ntt", "bench hpoly", "bench pipeline", "bench msm"}) {
    const auto r = run_stoker(std::string(cmd) + " --help");
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("usage: stoker"), std::string::npos) << cmd << ": " << r.output;
  }
  const auto bench = run_stoker("bench --help");
  for (const char* name : {"alloc", "ntt", "hpoly", "pipeline"})
    EXPECT_NE(bench.output.find(std::string("  ") + name + " "), std::string::npos) << bench.output;
}

// Every --json output parses as JSON and keeps the field names that
// scripts and checks read. On the host backend, at small sizes.
TEST(Cli, JsonOutputOfEveryCommandParses) {
  const auto json_of = [](const std::string& args) {
    const std::string cmd = std::string(STOKER_BINARY) + " " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf;
    for (std::size_t n; p && (n = fread(buf.data(), 1, buf.size(), p)) > 0;)
      out.append(buf.data(), n);
    if (p) pclose(p);
    try {
      return nlohmann::json::parse(out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << args << ": " << e.what() << "\n" << out;
      return nlohmann::json();
    }
  };
  const auto proofs = json_of("run --backend host --log-n 6 --partitions 2 --json");
  EXPECT_EQ(proofs.value("workload", ""), "groth16") << "the default workload";
  EXPECT_EQ(proofs.value("partitions_done", 0), 2);
  EXPECT_EQ(proofs.value("verified", false), true) << proofs.dump();
  const auto msm_h =
      json_of("run --backend host --workload ntt_msm_h --log-n 6 --partitions 2 --json");
  EXPECT_EQ(msm_h.value("workload", ""), "ntt_msm_h");
  EXPECT_EQ(msm_h.value("partitions_done", 0), 2);
  EXPECT_EQ(msm_h.value("verified", false), true);
  EXPECT_EQ(msm_h["points"].size(), 2u) << msm_h.dump();
  EXPECT_TRUE(msm_h["kernel_steps_ms_median"].contains("msm")) << msm_h.dump();
  const auto hpoly = json_of("run --backend host --workload hpoly --log-n 6 --partitions 2 --json");
  for (const char* key : {"job", "workload", "partitions", "partitions_done", "verified", "wall_ms",
                          "bound_ms", "h2d_busy", "device_busy", "error"})
    EXPECT_TRUE(hpoly.contains(key)) << key << " in " << hpoly.dump();
  EXPECT_EQ(hpoly.value("workload", ""), "hpoly");
  EXPECT_EQ(hpoly.value("partitions_done", 0), 2);
  EXPECT_EQ(hpoly.value("verified", false), true);
  const auto synthetic =
      json_of("run --backend host --workload synthetic --partitions 2 --size-mib 1 --json");
  EXPECT_EQ(synthetic.value("workload", ""), "synthetic");
  EXPECT_EQ(synthetic.value("partitions_done", 0), 2);
  const auto info = json_of("info --json");
  EXPECT_TRUE(info.contains("host") && info.contains("devices") && info.contains("topology"))
      << info.dump();
  const auto stress = json_of("stress --backend host --jobs 5 --submitters 1 --quiet --json");
  EXPECT_EQ(stress.value("ok", false), true) << stress.dump();
  EXPECT_EQ(stress.value("jobs_submitted", 0), 5) << stress.dump();
  const auto alloc =
      json_of("bench alloc --backend host --quick --sizes-mib 1 --seconds 0.01 --threads 2 --json");
  EXPECT_TRUE(alloc.contains("cycle") && alloc.contains("throughput")) << alloc.dump();
  for (const char* bench : {"bench ntt", "bench hpoly"}) {
    const auto rows = json_of(std::string(bench) + " --cpu --log-n 4 --reps 1 --json");
    ASSERT_TRUE(rows.is_array() && rows.size() == 1) << bench << ": " << rows.dump();
    EXPECT_EQ(rows[0].value("log_n", 0), 4);
  }
  // Without a GPU doctor has nothing to measure, and says so in JSON.
  const auto doctor = json_of("doctor --quick --json");
  EXPECT_TRUE(doctor.is_object()) << doctor.dump();
}

// tools/scripts/ab, the alternated A/B of two binaries: runs them in turns, reads
// the JSON figure asked for and summarises each side and the pairs' ratios;
// a figure that is not in the output, or a bad command line, is an error
// that says so.
TEST(Cli, AbAlternatesTwoBinariesAndNamesWhatIsMissing) {
  const std::string ab = std::string(STOKER_SOURCE_DIR) + "/tools/scripts/ab";
  const std::string bin = STOKER_BINARY;
  const std::string job =
      " -- run --backend host --workload synthetic --partitions 2 --no-progress";
  const auto ok =
      run_command(ab + " --reps 3 --env-b STOKER_CHUNK_KIB=64 " + bin + " " + bin + job);
  ASSERT_EQ(ok.status, 0) << ok.output;
  for (const char* line : {"rep 1: A ", "rep 3: A ", "over 3 runs", "STOKER_CHUNK_KIB=64: median ",
                           "B/A per pair (wall_ms): median "})
    EXPECT_NE(ok.output.find(line), std::string::npos) << line << " in:\n" << ok.output;
  EXPECT_EQ(ok.output.find("rep 4:"), std::string::npos) << ok.output;

  const auto missing = run_command(ab + " --reps 1 --field no_such " + bin + " " + bin + job);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("no number \"no_such\""), std::string::npos) << missing.output;
  const auto reps = run_command(ab + " --reps 0 " + bin + " " + bin + job);
  EXPECT_EQ(reps.status, 2);
  EXPECT_NE(reps.output.find("--reps must be a positive count, not '0'"), std::string::npos)
      << reps.output;
  const auto not_bin = run_command(ab + " /no/such/stoker " + bin + job);
  EXPECT_EQ(not_bin.status, 2);
  EXPECT_NE(not_bin.output.find("'/no/such/stoker' is not an executable"), std::string::npos)
      << not_bin.output;
}

}  // namespace

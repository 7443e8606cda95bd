// `stoker srs generate` as a user runs it, on the CPU: the file's size,
// the same bytes for the same seed, a file `stoker msm` reads and sums
// (a unit scalar vector picks out the point it names), and exit status 2
// with the problem named for bad command lines.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

struct Outcome {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Outcome run_stoker(const std::string& args) {
  Outcome r;
  const std::string cmd = std::string(STOKER_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;)
    r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

class SrsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_srs_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static Bytes read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
  }
  static void write(const std::string& p, const Bytes& b) {
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }

  fs::path dir_;
};

TEST_F(SrsCli, GeneratesAFileThatMsmReads) {
  const std::string srs = path("srs.g1");
  Outcome r = run_stoker("srs generate --cpu --log-n 5 --seed 7 --out " + srs);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("31 points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2976 bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CPU"), std::string::npos) << r.output;
  const Bytes points = read(srs);
  ASSERT_EQ(points.size(), 31u * 96);

  // The unit vector e_3 as scalars: the sum is point 3 of the file.
  Bytes scalars(31 * 32, 0);
  scalars[3 * 32] = 1;
  write(path("e3.bin"), scalars);
  r = run_stoker("msm --cpu --points " + srs + " --scalars " + path("e3.bin") + " --out " +
                 path("sum.bin"));
  ASSERT_EQ(r.status, 0) << r.output;  // every point decoded, on the curve and in G1
  EXPECT_EQ(read(path("sum.bin")), Bytes(points.begin() + 3 * 96, points.begin() + 4 * 96));
}

TEST_F(SrsCli, SameSeedSameBytesOtherSeedOtherBytes) {
  ASSERT_EQ(run_stoker("srs generate --cpu --log-n 4 --seed 1 --out " + path("a")).status, 0);
  ASSERT_EQ(run_stoker("srs generate --cpu --log-n 4 --seed 1 --out " + path("b")).status, 0);
  ASSERT_EQ(run_stoker("srs generate --cpu --log-n 4 --seed 2 --out " + path("c")).status, 0);
  EXPECT_EQ(read(path("a")), read(path("b")));
  EXPECT_NE(read(path("a")), read(path("c")));
}

TEST_F(SrsCli, RefusesBadCommandLinesWithStatus2) {
  const std::string out = " --out " + path("x");
  for (const std::string& args : std::vector<std::string>{
           "srs", "srs bogus", "srs generate --cpu --seed 1" + out,
           "srs generate --cpu --log-n 4" + out, "srs generate --cpu --log-n 4 --seed 1",
           "srs generate --cpu --log-n 0 --seed 1" + out,
           "srs generate --cpu --log-n 29 --seed 1" + out,
           "srs generate --cpu --device 0 --log-n 4 --seed 1" + out,
           "srs generate --log-n 4 --seed -1" + out,
           "srs generate --log-n 4 --seed 1 --out " + dir_.string()}) {
    const Outcome r = run_stoker(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("stoker srs"), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(path("x")));
}

TEST_F(SrsCli, HelpSaysItIsAToy) {
  Outcome r = run_stoker("srs generate --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("TOY"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("seed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NEVER use it in production"), std::string::npos) << r.output;
  r = run_stoker("srs --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("generate"), std::string::npos) << r.output;
  r = run_stoker("--help");
  EXPECT_NE(r.output.find("srs"), std::string::npos) << r.output;
}

}  // namespace

// The files the stoker binary reads and writes, as a user names them: an
// output is never one of the inputs, an input or output that is not a
// regular file is named as such before any work, and a killed write leaves
// no temporary file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test/tools/stoker_process.hpp"

namespace {

namespace fs = std::filesystem;
using stoker::test::has;
using stoker::test::run_shell;
using stoker::test::run_stoker;

class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string read(const std::string& name) const {
    std::ifstream f(path(name), std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  // 15 points of a toy SRS and as many zero scalars: inputs msm accepts.
  void msm_inputs() const {
    const auto srs = run_stoker("srs generate --cpu --log-n 4 --seed 1 --out " + path("p.g1"));
    ASSERT_EQ(srs.status, 0) << srs.both();
    write("s.fr", std::string(15 * 32, '\0'));
  }
  // 16 zero scalars: an input of ntt and hpoly.
  void elements(const std::string& name) const { write(name, std::string(16 * 32, '\0')); }

  fs::path dir_;
};

TEST_F(CliFiles, MsmRefusesAnOutputThatIsOneOfItsInputs) {
  msm_inputs();
  const std::string points = read("p.g1"), scalars = read("s.fr");
  fs::create_symlink("p.g1", path("link.g1"));
  fs::create_hard_link(path("s.fr"), path("hard.fr"));
  for (const auto& [out, option] : {std::pair{"p.g1", "--points"},
                                    {"s.fr", "--scalars"},
                                    {"link.g1", "--points"},
                                    {"hard.fr", "--scalars"}}) {
    const auto r = run_stoker("msm --cpu --points " + path("p.g1") + " --scalars " + path("s.fr") +
                              " --out " + path(out));
    EXPECT_EQ(r.status, 2) << out << ": " << r.both();
    EXPECT_TRUE(has(r.err, "--out " + path(out) + " is the same file as " + option))
        << out << ": " << r.both();
    EXPECT_EQ(read("p.g1"), points) << out;
    EXPECT_EQ(read("s.fr"), scalars) << out;
  }
  EXPECT_TRUE(fs::is_symlink(path("link.g1")));
  // Another file is written as before.
  const auto ok = run_stoker("msm --cpu --points " + path("p.g1") + " --scalars " + path("s.fr") +
                             " --out " + path("sum.g1"));
  EXPECT_EQ(ok.status, 0) << ok.both();
  EXPECT_EQ(fs::file_size(path("sum.g1")), 96u);
}

TEST_F(CliFiles, HpolyRefusesAnOutputThatIsOneOfItsInputsAndNttTransformsInPlace) {
  for (const char* name : {"a", "b", "c"}) elements(name);
  for (const char* input : {"a", "b", "c"}) {
    const auto r = run_stoker("hpoly --cpu --a " + path("a") + " --b " + path("b") + " --c " +
                              path("c") + " --out " + path(input));
    EXPECT_EQ(r.status, 2) << input << ": " << r.both();
    EXPECT_TRUE(has(r.err, "is the same file as --" + std::string(input))) << r.both();
  }
  write("x", std::string(16 * 32, '\1'));
  const std::string before = read("x");
  const auto ntt = run_stoker("ntt --cpu --log-n 4 --in " + path("x") + " --out " + path("x"));
  EXPECT_EQ(ntt.status, 0) << ntt.both();
  EXPECT_NE(read("x"), before);
}

// An input that is not a regular file (a FIFO, a device, /dev/stdin) is
// named as such, before anything is read from it: a FIFO no one writes to
// would otherwise block the command. msm, as prove and verify, takes it for
// a usage error (exit 2), as it does an input that is missing.
TEST_F(CliFiles, AnInputThatIsNotARegularFileIsNamed) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  elements("x");
  msm_inputs();
  struct Case {
    std::string args, message;
    int status;
  };
  for (const auto& [args, message, status] : std::vector<Case>{
           {"ntt --cpu --log-n 4 --in " + path("fifo") + " --out " + path("y"),
            path("fifo") + ": is a FIFO, not a regular file", 2},
           {"ntt --cpu --log-n 4 --in /dev/zero --out " + path("y"),
            "/dev/zero: is a character device, not a regular file", 2},
           {"ntt --cpu --log-n 4 --in " + path("none") + " --out " + path("y"),
            path("none") + ": cannot read (No such file or directory)", 2},
           {"hpoly --cpu --a " + path("x") + " --b " + path("fifo") + " --c " + path("x") +
                " --out " + path("y"),
            path("fifo") + ": is a FIFO, not a regular file", 2},
           {"hpoly --cpu --a " + path("x") + " --b " + path("x") + " --c " + path("none") +
                " --out " + path("y"),
            path("none") + ": cannot read (No such file or directory)", 2},
           {"msm --cpu --points " + path("fifo") + " --scalars " + path("s.fr") + " --out " +
                path("y"),
            path("fifo") + ": is a FIFO, not a regular file", 2},
           {"msm --cpu --points " + path("p.g1") + " --scalars /dev/zero --out " + path("y"),
            "/dev/zero: is a character device, not a regular file", 2},
           {"msm --cpu --points " + path("none.g1") + " --scalars " + path("s.fr") + " --out " +
                path("y"),
            path("none.g1") + ": cannot read (No such file or directory)", 2},
           {"msm --cpu --points " + path("p.g1") + " --scalars " + path("none.fr") + " --out " +
                path("y"),
            path("none.fr") + ": cannot read (No such file or directory)", 2}}) {
    const auto r =
        run_shell(std::string("exec < /dev/null; timeout 20 ") + STOKER_BINARY + " " + args);
    EXPECT_EQ(r.status, status) << args << ": " << r.both();
    EXPECT_TRUE(has(r.err, message)) << args << ": " << r.both();
    EXPECT_FALSE(fs::exists(path("y"))) << args;
  }
}

// --out /dev/stdout into a pipe is a FIFO: refused before the work, as
// /dev/null (a character device) is, not failed after it.
TEST_F(CliFiles, OutToStdoutIntoAPipeIsRefusedBeforeTheWork) {
  elements("x");
  const auto r = run_stoker("ntt --cpu --log-n 4 --in " + path("x") + " --out /dev/stdout");
  EXPECT_EQ(r.status, 2) << r.both();
  EXPECT_TRUE(has(r.err, "/dev/stdout: is a FIFO, not a regular file")) << r.both();
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// Killed by SIGXFSZ mid-write (the file size limit), the command leaves
// no temporary file: the signal's default action still ends it.
TEST_F(CliFiles, AWriteEndedByASignalLeavesNoTemporaryFile) {
  const auto r = run_shell("ulimit -f 10; exec " + std::string(STOKER_BINARY) +
                           " srs generate --cpu --log-n 8 --seed 1 --out " + path("a.g1"));
  EXPECT_EQ(r.signal, SIGXFSZ) << r.status << ": " << r.both();
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.push_back(e.path().filename());
  EXPECT_TRUE(left.empty()) << left.size() << " left, the first: " << left[0];
}

// A temporary of a process that is gone (killed outright, by SIGKILL) is
// removed when the next write to its target starts; a live process's, or
// another target's, is not.
TEST_F(CliFiles, AWriteSweepsItsTargetsStaleTemporaries) {
  const auto gone = run_shell("sh -c 'echo $$'");
  const std::string dead = std::to_string(std::stol(gone.out));
  const std::string live = std::to_string(::getpid());
  write(".a.g1." + dead + ".Ab3dE9", "stale");
  write(".b.g1." + dead + ".Ab3dE9", "another target's");
  write(".a.g1." + live + ".Zz9yX8", "a live writer's");
  write(".a.g1.keep", "not a temporary");
  const auto r = run_stoker("srs generate --cpu --log-n 2 --seed 1 --out " + path("a.g1"));
  ASSERT_EQ(r.status, 0) << r.both();
  EXPECT_FALSE(fs::exists(path(".a.g1." + dead + ".Ab3dE9")));
  EXPECT_TRUE(fs::exists(path(".b.g1." + dead + ".Ab3dE9")));
  EXPECT_TRUE(fs::exists(path(".a.g1." + live + ".Zz9yX8")));
  EXPECT_TRUE(fs::exists(path(".a.g1.keep")));
  EXPECT_EQ(fs::file_size(path("a.g1")), 3u * 96);
}

}  // namespace

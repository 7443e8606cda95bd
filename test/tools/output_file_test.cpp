// OutputFile, the one way the stoker binary writes a file: through links,
// atomically, never over something that is not a regular file, and with the
// reason when it cannot.
#include "tools/cli/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_output_file_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string contents(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, WritesANewFileAndReplacesAnOldOneWhole) {
  auto out = OutputFile::check(path("a.bin"));
  ASSERT_TRUE(out) << out.error().what();
  EXPECT_FALSE(fs::exists(path("a.bin"))) << "check() must not create the file";
  ASSERT_FALSE(out->write("first, longer contents"));
  EXPECT_EQ(contents(path("a.bin")), "first, longer contents");
  ASSERT_FALSE(out->write("second"));
  EXPECT_EQ(contents(path("a.bin")), "second");
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1);
}

TEST_F(OutputFileTest, WritesThroughASymlinkWhichStaysALink) {
  fs::create_directories(dir_ / "real");
  std::ofstream(path("real/target.bin")) << "old";
  fs::create_symlink("real/target.bin", path("link.bin"));
  auto out = OutputFile::check(path("link.bin"));
  ASSERT_TRUE(out) << out.error().what();
  ASSERT_FALSE(out->write("new"));
  EXPECT_TRUE(fs::is_symlink(path("link.bin")));
  EXPECT_EQ(contents(path("real/target.bin")), "new");
  EXPECT_EQ(out->target(), path("real/target.bin"));
}

TEST_F(OutputFileTest, KeepsTheReplacedFilesPermissions) {
  std::ofstream(path("p.bin")) << "old";
  fs::permissions(path("p.bin"),
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  auto out = OutputFile::check(path("p.bin"));
  ASSERT_TRUE(out);
  ASSERT_FALSE(out->write("new"));
  EXPECT_EQ(fs::status(path("p.bin")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(OutputFileTest, RefusesAFifoAndLeavesItAFifo) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_symlink("fifo", path("to_fifo"));
  for (const auto& p : {path("fifo"), path("to_fifo")}) {
    auto out = OutputFile::check(p);
    ASSERT_FALSE(out) << p;
    EXPECT_NE(out.error().what().find("is a FIFO, not a regular file"), std::string::npos)
        << out.error().what();
  }
  EXPECT_TRUE(fs::is_fifo(path("fifo")));
}

TEST_F(OutputFileTest, RefusesADirectoryNamingIt) {
  fs::create_directories(dir_ / "d");
  auto out = OutputFile::check(path("d"));
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().what().find(path("d") + ": is a directory"), std::string::npos)
      << out.error().what();
  EXPECT_TRUE(fs::is_directory(path("d")));
}

TEST_F(OutputFileTest, RefusesACharacterDevice) {
  auto out = OutputFile::check("/dev/null");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().what().find("is a character device"), std::string::npos)
      << out.error().what();
}

TEST_F(OutputFileTest, MissingDirectoryIsNamedWithTheReason) {
  auto out = OutputFile::check(path("no/such/dir/x.bin"));
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().what().find("No such file or directory"), std::string::npos)
      << out.error().what();
  EXPECT_NE(out.error().what().find(path("no/such/dir")), std::string::npos) << out.error().what();
}

// The path is checked again when written: a directory removed meanwhile is
// named, and a FIFO put in the file's place is not replaced.
TEST_F(OutputFileTest, WriteChecksThePathAgain) {
  fs::create_directories(dir_ / "sub");
  auto out = OutputFile::check(path("sub/x.bin"));
  ASSERT_TRUE(out);
  fs::remove(dir_ / "sub");
  const auto gone = out->write("x");
  ASSERT_TRUE(gone);
  EXPECT_NE(gone.what().find("No such file or directory"), std::string::npos) << gone.what();

  auto later = OutputFile::check(path("y"));
  ASSERT_TRUE(later);
  ASSERT_EQ(::mkfifo(path("y").c_str(), 0600), 0);
  const auto fifo = later->write("x");
  ASSERT_TRUE(fifo);
  EXPECT_NE(fifo.what().find("is a FIFO"), std::string::npos) << fifo.what();
  EXPECT_TRUE(fs::is_fifo(path("y")));
}

// Two outputs that are one file, however they are spelled, are refused
// naming both options, whether the file exists yet or not; two files are
// not.
TEST_F(OutputFileTest, CheckOutputsRefusesOneFileSpelledTwoWays) {
  fs::create_directories(dir_ / "sub");
  fs::create_directory_symlink(dir_, path("here"));
  std::ofstream(path("old.json")) << "old";
  fs::create_hard_link(path("old.json"), path("hard.json"));
  fs::create_symlink("new.json", path("to_new.json"));
  for (const auto& [a, b] : {std::pair{path("new.json"), path("./new.json")},
                             {path("new.json"), path("sub/../new.json")},
                             {path("new.json"), path("here/new.json")},
                             {path("new.json"), path("to_new.json")},
                             {path("old.json"), path("sub/../old.json")},
                             {path("old.json"), path("here/./old.json")},
                             {path("old.json"), path("hard.json")}}) {
    const auto outs = check_outputs({{"--proof", a}, {"--public", b}}, {});
    ASSERT_FALSE(outs) << a << " and " << b;
    EXPECT_EQ(outs.error().what(), "--proof " + a + " and --public " + b + " name the same file");
  }
  EXPECT_FALSE(fs::exists(path("new.json")));
  EXPECT_EQ(contents(path("old.json")), "old");
  const auto two =
      check_outputs({{"--proof", path("new.json")}, {"--public", path("sub/new.json")}},
                    {{"--zkey", path("old.json")}});
  ASSERT_TRUE(two) << two.error().what();
  EXPECT_EQ(two->size(), 2u);
}

}  // namespace
}  // namespace stoker::tools

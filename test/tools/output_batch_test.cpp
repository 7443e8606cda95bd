// OutputBatch: a command's outputs written all or none, and never a
// temporary file left beside them.
#include "tools/cli/output_batch.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

class OutputBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_output_batch_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(path("a")) << "old a";
    std::ofstream(path("b")) << "old b";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string contents(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  OutputFile output(const std::string& name) const { return *OutputFile::check(path(name)); }
  // The names in the directory, temporaries included.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(OutputBatchTest, ReplacesNoOutputBeforeCommitAndEveryOneAtIt) {
  OutputBatch batch;
  ASSERT_FALSE(batch.add(output("a"), "new a"));
  ASSERT_FALSE(batch.add(output("b"), [](const std::string& p) {
    std::ofstream(p, std::ios::binary) << "new b";
    return Error{};
  }));
  EXPECT_EQ(contents(path("a")), "old a");
  EXPECT_EQ(contents(path("b")), "old b");
  EXPECT_EQ(names().size(), 4u) << "a temporary beside each output";
  ASSERT_FALSE(batch.commit());
  EXPECT_EQ(contents(path("a")), "new a");
  EXPECT_EQ(contents(path("b")), "new b");
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(OutputBatchTest, AFailedWriteLeavesEveryOutputAsItWasAndNoTemporary) {
  OutputBatch batch;
  ASSERT_FALSE(batch.add(output("a"), "new a"));
  const Error e = batch.add(output("b"), [](const std::string& p) {
    std::ofstream(p, std::ios::binary) << "half of b";
    return Error{Errc::io_error, p + ": disk full"};
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e.what(), "cannot write " + path("b") + ": disk full");
  EXPECT_EQ(contents(path("a")), "old a");
  EXPECT_EQ(contents(path("b")), "old b");
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(OutputBatchTest, ABatchLeftUncommittedRemovesItsTemporaries) {
  {
    OutputBatch batch;
    ASSERT_FALSE(batch.add(output("a"), "new a"));
    ASSERT_FALSE(batch.add(output("c"), "new c"));
  }
  EXPECT_EQ(contents(path("a")), "old a");
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b"}));
}

// A path that turned into something else while the work ran fails the
// commit before any output is replaced.
TEST_F(OutputBatchTest, CommitChecksEveryPathBeforeItReplacesOne) {
  const OutputFile a = output("a"), c = output("c");
  OutputBatch batch;
  ASSERT_FALSE(batch.add(a, "new a"));
  ASSERT_FALSE(batch.add(c, "new c"));
  fs::create_directory(path("c"));
  const Error e = batch.commit();
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find(path("c") + ": is a directory"), std::string::npos) << e.what();
  EXPECT_EQ(contents(path("a")), "old a");
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(OutputBatchTest, KeepsAReplacedFilesPermissionsWhateverWroteIt) {
  fs::permissions(path("b"), fs::perms::owner_read | fs::perms::owner_write);
  OutputBatch batch;
  ASSERT_FALSE(batch.add(output("b"), [](const std::string& p) {
    std::ofstream(p, std::ios::binary) << "new b";
    return Error{};
  }));
  ASSERT_FALSE(batch.commit());
  EXPECT_EQ(fs::status(path("b")).permissions(), fs::perms::owner_read | fs::perms::owner_write);
}

}  // namespace
}  // namespace stoker::tools

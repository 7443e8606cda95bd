// `stoker run` asked for more memory than the machine or the host budget
// holds: it refuses before allocating, with an exit status (not a signal
// from an allocation that failed or an OOM kill) and one line that names the
// size asked for and the bound it passes. On the host backend (the
// STOKER_BACKEND variable), so it runs without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <regex>
#include <string>

namespace {

struct Run {
  bool exited = false;  // false: killed by a signal (or not run)
  int status = -1;
  std::string errors;  // stderr
};

Run run_stoker(const std::string& args) {
  Run r;
  const std::string cmd =
      std::string("STOKER_BACKEND=host ") + STOKER_BINARY + " " + args + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;)
    r.errors.append(buf.data(), n);
  const int st = pclose(p);
  r.exited = WIFEXITED(st);
  r.status = r.exited ? WEXITSTATUS(st) : -1;
  return r;
}

void expect_refused(const std::string& args, const std::regex& says) {
  const auto r = run_stoker(args);
  ASSERT_TRUE(r.exited) << args << ": ended by a signal; stderr: " << r.errors;
  EXPECT_TRUE(r.status == 1 || r.status == 2)
      << args << ": status " << r.status << ": " << r.errors;
  ASSERT_FALSE(r.errors.empty()) << args;
  EXPECT_EQ(r.errors.find('\n'), r.errors.size() - 1) << args << ": not one line: " << r.errors;
  EXPECT_EQ(r.errors.rfind("stoker run: ", 0), 0u) << args << ": " << r.errors;
  EXPECT_TRUE(std::regex_search(r.errors, says)) << args << ": " << r.errors;
}

// A trillion partitions of caller memory is more than any machine has.
TEST(RunBounds, TooManyPartitionsAreRefusedNamingTheSizeAndTheMemory) {
  expect_refused("run --partitions 1000000000000 --no-progress",
                 std::regex("1000000000000 partitions .*[0-9]+ bytes.*need (more than|[0-9]+).*"
                            "(this machine has|the limit is|budget) [0-9]+ bytes"));
}

// 100000 MiB of pinned memory per partition is more than the host budget.
TEST(RunBounds, PartitionLargerThanTheHostBudgetIsRefusedNamingBoth) {
  expect_refused("run --workload synthetic --size-mib 100000 --no-progress",
                 std::regex("[0-9]+ bytes.*(budget|this machine has|the limit is).* [0-9]+ bytes"));
}

}  // namespace

// The record of checked key files: digests in and out; a record only this
// user may write; shared by several writers at once; where it lies by
// default.
#include "engine/groth16/checked_keys.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "test/engine/groth16/groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

namespace fs = std::filesystem;

KeyDigest digest(std::uint8_t seed, std::uint64_t bytes = 1000) {
  KeyDigest d;
  for (std::size_t i = 0; i < d.sha256.size(); ++i)
    d.sha256[i] = static_cast<std::uint8_t>(seed * 31 + i);
  d.file_bytes = bytes;
  return d;
}

std::size_t lines_in(const fs::path& p) {
  std::ifstream in(p);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) n += !l.empty() && l[0] != '#';
  return n;
}

TEST(CheckedKeys, HoldsWhatWasAddedOnceAndNothingElse) {
  test::ScratchDir dir;
  const CheckedKeys record(fs::path(dir.path("cache")) / "stoker" / "checked-keys");
  auto absent = record.contains(digest(1));
  ASSERT_TRUE(absent) << absent.error().what();
  EXPECT_FALSE(*absent);  // no record yet
  ASSERT_FALSE(record.add(digest(1)));
  ASSERT_FALSE(record.add(digest(1)));
  EXPECT_TRUE(*record.contains(digest(1)));
  EXPECT_FALSE(*record.contains(digest(2)));
  EXPECT_FALSE(*record.contains(digest(1, 1001)));  // the same hash, another size
  EXPECT_EQ(lines_in(record.file()), 1u);
  // Made for this user alone.
  EXPECT_EQ(fs::status(record.file()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(record.file().parent_path()).permissions() & fs::perms::all,
            fs::perms::owner_all);
}

TEST(CheckedKeys, MayHoldOnlyFilesOfASizeItNames) {
  test::ScratchDir dir;
  const CheckedKeys record(dir.path("checked-keys"));
  auto none = record.may_hold(1000);
  ASSERT_TRUE(none) << none.error().what();
  EXPECT_FALSE(*none);  // no record yet
  ASSERT_FALSE(record.add(digest(1, 1000)));
  EXPECT_TRUE(*record.may_hold(1000));
  EXPECT_FALSE(*record.may_hold(100));  // a size is a whole word
  EXPECT_FALSE(*record.may_hold(10000));
  EXPECT_FALSE(*record.may_hold(1001));
  // A line of another tag (checks as they were) vouches for nothing.
  std::ofstream(record.file(), std::ios::app) << "v0 " << digest(2, 2000).hex() << " 2000\n";
  EXPECT_FALSE(*record.may_hold(2000));
  fs::permissions(record.file(), fs::perms::others_write, fs::perm_options::add);
  auto refused = record.may_hold(1000);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("writable by its group or others"), std::string::npos);
}

TEST(CheckedKeys, ARecordOthersMayWriteIsRefusedNamingWhy) {
  test::ScratchDir dir;
  const CheckedKeys record(dir.path("checked-keys"));
  ASSERT_FALSE(record.add(digest(1)));
  fs::permissions(record.file(), fs::perms::group_write, fs::perm_options::add);
  auto held = record.contains(digest(1));
  ASSERT_FALSE(held);
  EXPECT_NE(held.error().what().find("writable by its group or others"), std::string::npos)
      << held.error().what();
  EXPECT_TRUE(record.add(digest(2)));
}

TEST(CheckedKeys, ALinkInItsPlaceIsRefused) {
  test::ScratchDir dir;
  const CheckedKeys real(dir.path("real"));
  ASSERT_FALSE(real.add(digest(1)));
  fs::create_symlink(real.file(), dir.path("link"));
  const CheckedKeys linked(dir.path("link"));
  EXPECT_FALSE(linked.contains(digest(1)));
  EXPECT_TRUE(linked.add(digest(2)));
}

TEST(CheckedKeys, WritersAtOnceLoseNoLine) {
  test::ScratchDir dir;
  const fs::path file = dir.path("checked-keys");
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      const CheckedKeys record(file);  // each its own open file, as processes
      for (int i = 0; i < 20; ++i) EXPECT_FALSE(record.add(digest(static_cast<std::uint8_t>(t * 20 + i))));
    });
  for (auto& w : writers) w.join();
  const CheckedKeys record(file);
  EXPECT_EQ(lines_in(file), 160u);
  for (int i = 0; i < 160; ++i) EXPECT_TRUE(*record.contains(digest(static_cast<std::uint8_t>(i))));
}

TEST(CheckedKeys, ALineCutShortStaysApartFromTheNext) {
  test::ScratchDir dir;
  const CheckedKeys record(dir.path("checked-keys"));
  ASSERT_FALSE(record.add(digest(1)));
  {
    std::ofstream out(record.file(), std::ios::app);
    out << "v1 0123";  // a crash mid-line
  }
  ASSERT_FALSE(record.add(digest(2)));
  EXPECT_TRUE(*record.contains(digest(1)));
  EXPECT_TRUE(*record.contains(digest(2)));
}

TEST(CheckedKeys, LiesUnderTheCacheDirectoryTheEnvironmentNames) {
  const auto keep = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto stoker = keep("STOKER_CACHE_DIR"), xdg = keep("XDG_CACHE_HOME"), home = keep("HOME");
  ::setenv("STOKER_CACHE_DIR", "/s", 1);
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  ::setenv("HOME", "/h", 1);
  EXPECT_EQ(CheckedKeys::user_file(), fs::path("/s/checked-keys"));
  ::unsetenv("STOKER_CACHE_DIR");
  EXPECT_EQ(CheckedKeys::user_file(), fs::path("/x/stoker/checked-keys"));
  ::setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(CheckedKeys::user_file(), fs::path("/h/.cache/stoker/checked-keys"));
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CheckedKeys::user_file(), std::nullopt);
  const auto put = [](const char* n, const std::optional<std::string>& v) {
    if (v)
      ::setenv(n, v->c_str(), 1);
    else
      ::unsetenv(n);
  };
  put("STOKER_CACHE_DIR", stoker);
  put("XDG_CACHE_HOME", xdg);
  put("HOME", home);
}

}  // namespace
}  // namespace stoker::engine::groth16

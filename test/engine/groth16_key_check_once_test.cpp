// A key file's points checked once per file (the host backend: the engine's
// logic with the CPU's checks): a first load checks them and records the
// file's digest; a later load of the same bytes trusts them; a file whose
// points fail is never recorded; a recorded digest is what skips the checks
// (a spoilt key whose digest is in the record loads); a file written to
// after its digest fails a trusted load.
#include "engine/workloads/groth16_key_check_once.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <memory>
#include <span>

#include "engine/groth16/params_file.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/engine/groth16/groth16_files_test_util.hpp"

namespace stoker::engine {
namespace {

namespace g16 = groth16;
namespace wl = workloads;

class KeyCheckOnce : public ::testing::TestWithParam<g16::KeyFormat> {
 protected:
  boost::asio::io_context io;
  Engine engine{io.get_executor(), test::host_config()};
  g16::test::ScratchDir dir;
  bool snarkjs() const { return GetParam() == g16::KeyFormat::snarkjs; }

  g16::ProvingKey toy_key() const {
    const auto circuit = g16::make_toy_circuit({.constraints = 60, .num_public = 2}, 41);
    auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(42), GetParam(), 0, 2);
    EXPECT_TRUE(key) << key.error().what();
    return *key;
  }
  std::string write(const std::string& name, const g16::ProvingKey& key) const {
    const std::string path = dir.path(name + (snarkjs() ? ".zkey" : ".params"));
    const Error e = snarkjs() ? g16::write_zkey(path, key) : g16::write_params(path, key);
    EXPECT_FALSE(e) << e.what();
    return path;
  }
  std::unique_ptr<g16::KeyFile> open(const std::string& path) const {
    auto f = snarkjs() ? g16::open_zkey(path) : g16::open_params(path);
    EXPECT_TRUE(f) << f.error().what();
    return f ? std::move(*f) : nullptr;
  }
  Result<wl::KeyLoad> load(const std::string& path, const g16::CheckedKeys& record,
                           bool recheck = false, bool check = true) {
    auto file = open(path);
    if (!file) return Error{Errc::invalid_argument, "not opened"};
    return wl::load_groth16_key_once(engine, *file, "key",
                                     {.check_points = check, .record = &record, .recheck = recheck});
  }
};

TEST_P(KeyCheckOnce, AFileIsCheckedOnceThenTrustedByItsDigest) {
  const g16::CheckedKeys record(dir.path("cache/checked-keys"));
  const std::string path = write("k", toy_key());

  auto first = load(path, record);
  ASSERT_TRUE(first) << first.error().what();
  EXPECT_EQ(first->points, wl::KeyPoints::checked);
  EXPECT_TRUE(first->record_note.empty()) << first->record_note;
  EXPECT_GT(first->digest_s, 0);
  EXPECT_TRUE(first->digest_beside);  // the record holds no file of its size

  // A copy is the same bytes: checked before.
  std::filesystem::copy_file(path, dir.path("copy"));
  auto second = load(dir.path("copy"), record);
  ASSERT_TRUE(second) << second.error().what();
  EXPECT_EQ(second->points, wl::KeyPoints::checked_before);
  EXPECT_FALSE(second->digest_beside);
  EXPECT_EQ(second->key.points.bytes(), first->key.points.bytes());

  auto again = load(path, record, /*recheck=*/true);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->points, wl::KeyPoints::checked);
  EXPECT_TRUE(again->digest_beside);

  auto trusted = load(path, record, false, /*check=*/false);
  ASSERT_TRUE(trusted);
  EXPECT_EQ(trusted->points, wl::KeyPoints::trusted);
  EXPECT_EQ(trusted->digest_s, 0);
}

TEST_P(KeyCheckOnce, AnotherFileOfTheSameSizeIsCheckedAndRecordedToo) {
  // Two keys of one size: the second's digest is taken first (the record
  // holds a file of its size), is not the first's, and its points are
  // checked; then both are recorded.
  const g16::CheckedKeys record(dir.path("checked-keys"));
  const std::string a = write("a", toy_key());
  auto other = toy_key();
  other.l[0] = other.l[1];
  const std::string b = write("b", other);
  ASSERT_EQ(std::filesystem::file_size(a), std::filesystem::file_size(b));
  for (const auto& path : {a, b}) {
    auto loaded = load(path, record);
    ASSERT_TRUE(loaded) << loaded.error().what();
    EXPECT_EQ(loaded->points, wl::KeyPoints::checked) << path;
    EXPECT_TRUE(loaded->record_note.empty()) << loaded->record_note;
    EXPECT_GT(loaded->digest_s, 0);
    EXPECT_EQ(loaded->digest_beside, path == a) << path;  // b's digest first: a's size is held
  }
  for (const auto& path : {a, b}) {
    auto again = load(path, record);
    ASSERT_TRUE(again) << again.error().what();
    EXPECT_EQ(again->points, wl::KeyPoints::checked_before) << path;
  }
}

// A key file whose first read changes the file (its change time, as a
// write would): the bytes the digest beside the load read may not be the
// checked ones, so nothing is recorded, whichever thread read first.
class ChangedOnFirstRead : public g16::KeyFile {
 public:
  explicit ChangedOnFirstRead(std::unique_ptr<g16::KeyFile> inner) : inner_(std::move(inner)) {
    head_ = inner_->head();
    counts_ = inner_->counts();
    struct stat st {};
    ::fstat(inner_->fd(), &st);
    changed_ = st.st_ctim;
  }
  const std::string& path() const noexcept override { return inner_->path(); }
  int fd() const noexcept override { return inner_->fd(); }
  g16::PointForm stored_form() const noexcept override { return inner_->stored_form(); }
  Error read(g16::Query q, std::size_t first, std::span<kernels::G1Affine> out, unsigned threads,
             g16::PointForm form) const override {
    touch();
    return inner_->read(q, first, out, threads, form);
  }
  Error read_b_g2(std::size_t first, std::span<kernels::G2Affine> out, unsigned threads,
                  g16::PointForm form) const override {
    touch();
    return inner_->read_b_g2(first, out, threads, form);
  }

 private:
  // The same mode again: only the change time moves, once the kernel's
  // coarse clock has ticked past the one the file had.
  void touch() const {
    if (touched_.exchange(true)) return;
    for (int i = 0; i < 1000; ++i) {
      struct stat st {};
      ::fstat(inner_->fd(), &st);
      ::fchmod(inner_->fd(), st.st_mode & 07777);
      ::fstat(inner_->fd(), &st);
      if (st.st_ctim.tv_sec != changed_.tv_sec || st.st_ctim.tv_nsec != changed_.tv_nsec) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::unique_ptr<g16::KeyFile> inner_;
  struct timespec changed_ {};
  mutable std::atomic<bool> touched_{false};
};

TEST_P(KeyCheckOnce, AFileChangedDuringItsCheckedLoadIsNotRecorded) {
  const g16::CheckedKeys record(dir.path("checked-keys"));
  const std::string path = write("k", toy_key());
  ChangedOnFirstRead file(open(path));
  auto loaded = wl::load_groth16_key_once(engine, file, "key", {.record = &record});
  ASSERT_TRUE(loaded) << loaded.error().what();
  EXPECT_EQ(loaded->points, wl::KeyPoints::checked);
  EXPECT_TRUE(loaded->digest_beside);
  EXPECT_NE(loaded->record_note.find("not recorded as checked"), std::string::npos)
      << loaded->record_note;
  EXPECT_FALSE(std::filesystem::exists(record.file()));
  // Unchanged, the next load records it.
  auto again = load(path, record);
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_TRUE(again->record_note.empty()) << again->record_note;
  EXPECT_TRUE(std::filesystem::exists(record.file()));
}

TEST_P(KeyCheckOnce, AFileWhosePointsFailIsNeverRecorded) {
  const g16::CheckedKeys record(dir.path("checked-keys"));
  auto key = toy_key();
  key.b_g1[0].y = key.b_g1[0].y + kernels::Fq::one();  // off the curve
  const std::string path = write("bad", key);
  for (int i = 0; i < 2; ++i) {
    auto refused = load(path, record);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().what().find("not on the curve"), std::string::npos)
        << refused.error().what();
  }
  EXPECT_FALSE(std::filesystem::exists(record.file()));
  test::expect_idle(engine);
}

TEST_P(KeyCheckOnce, ARecordedDigestIsWhatSkipsTheChecks) {
  // A spoilt key whose digest the record holds (as a record written by
  // someone else could): its points load unchecked, which is why the
  // record must be this user's alone.
  const g16::CheckedKeys record(dir.path("checked-keys"));
  auto key = toy_key();
  key.b_g1[0].y = key.b_g1[0].y + kernels::Fq::one();
  const std::string path = write("bad", key);
  auto file = open(path);
  auto d = g16::digest_key_file(file->fd(), path);
  ASSERT_TRUE(d);
  ASSERT_FALSE(record.add(*d));
  auto loaded = load(path, record);
  ASSERT_TRUE(loaded) << loaded.error().what();
  EXPECT_EQ(loaded->points, wl::KeyPoints::checked_before);
}

TEST_P(KeyCheckOnce, AnUntrustworthyRecordMeansTheChecksRun) {
  const g16::CheckedKeys record(dir.path("checked-keys"));
  const std::string path = write("k", toy_key());
  ASSERT_TRUE(load(path, record));
  std::filesystem::permissions(record.file(), std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  auto loaded = load(path, record);
  ASSERT_TRUE(loaded) << loaded.error().what();
  EXPECT_EQ(loaded->points, wl::KeyPoints::checked);
  EXPECT_NE(loaded->record_note.find("writable by its group or others"), std::string::npos)
      << loaded->record_note;
}

TEST_P(KeyCheckOnce, AFileThatChangesAfterItsDigestFailsATrustedRead) {
  const std::string path = write("k", toy_key());
  auto file = open(path);
  auto id = g16::identity_of(file->fd(), path);
  ASSERT_TRUE(id);
  kernels::G1Affine p[1];
  file->expect_unchanged(*id);
  EXPECT_FALSE(file->read(g16::Query::l, 0, p));
  auto later = *id;
  later.changed_ns += 1;  // as a write after the digest leaves it
  file->expect_unchanged(later);
  const Error e = file->read(g16::Query::l, 0, p);
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find(path + ": the file changed while it was read"), std::string::npos)
      << e.what();
  kernels::G2Affine q[1];
  EXPECT_TRUE(file->read_b_g2(0, q));
}

INSTANTIATE_TEST_SUITE_P(BothFormats, KeyCheckOnce,
                         ::testing::Values(g16::KeyFormat::snarkjs, g16::KeyFormat::bellman),
                         [](const auto& i) {
                           return i.param == g16::KeyFormat::snarkjs ? "snarkjs" : "bellman";
                         });

}  // namespace
}  // namespace stoker::engine

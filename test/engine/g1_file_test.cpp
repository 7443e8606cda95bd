// G1 point files: what is written is read back, slices included, and every
// refusal names the file with the size or the index of the first bad point.
#include "engine/g1_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/workloads/toy_srs.hpp"
#include "kernels/g1_encoding.hpp"

namespace stoker::engine {
namespace {

namespace fs = std::filesystem;
using kernels::G1Affine;
using Bytes = std::vector<unsigned char>;

class G1File : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             ("stoker_g1_file_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".g1"))
                .string();
    points_.resize(workloads::toy_srs_points(7));
    ASSERT_FALSE(workloads::make_toy_srs(2, 7, 0, points_));
    points_[5] = G1Affine::infinity();
    bytes_.resize(points_.size() * kernels::kG1EncodedBytes);
    for (std::size_t i = 0; i < points_.size(); ++i)
      kernels::encode_g1(points_[i], &bytes_[i * kernels::kG1EncodedBytes]);
  }
  void TearDown() override { fs::remove(path_); }

  void write(const Bytes& b) {
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  static bool same(const G1Affine& a, const G1Affine& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  }

  // Every point different, so a range read into the wrong place shows. The
  // reader checks the form, not the curve, so the coordinates are random
  // values below q (top byte under 0x10), not points of G1.
  static Bytes distinct_points(std::size_t n) {
    Bytes b(n * kernels::kG1EncodedBytes);
    std::mt19937_64 rng(n);
    for (auto& byte : b) byte = static_cast<unsigned char>(rng());
    for (std::size_t i = 0; i < b.size(); i += kernels::kG1EncodedBytes / 2) b[i] &= 0x0f;
    return b;
  }
  // What the reader must agree with: each point decoded on its own.
  static std::vector<G1Affine> decode_one_by_one(const Bytes& b) {
    std::vector<G1Affine> p(b.size() / kernels::kG1EncodedBytes);
    for (std::size_t i = 0; i < p.size(); ++i)
      EXPECT_FALSE(kernels::decode_g1(&b[i * kernels::kG1EncodedBytes], p[i])) << i;
    return p;
  }

  std::string path_;
  std::vector<G1Affine> points_;
  Bytes bytes_;
};

// Enough points that eight threads get a range each (parallel_for gives a
// thread no fewer than 4096), and not a multiple of the thread count or
// of the 4096-point batch each thread reads at a time.
constexpr std::size_t kManyPoints = 8 * 4096 + 1234;

TEST_F(G1File, ReadsBackWhatWasWritten) {
  write(bytes_);
  auto n = g1_file_points(path_);
  ASSERT_TRUE(n) << n.error().what();
  EXPECT_EQ(*n, points_.size());
  for (unsigned threads : {1u, 4u}) {
    std::vector<G1Affine> back(points_.size());
    const Error e = read_g1_file(path_, back, threads);
    ASSERT_FALSE(e) << e.what();
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(same(back[i], points_[i])) << i;
  }
  std::vector<G1Affine> slice(10);
  ASSERT_FALSE(read_g1_file(path_, 100, slice));
  for (std::size_t i = 0; i < slice.size(); ++i) EXPECT_TRUE(same(slice[i], points_[100 + i]));
  std::vector<G1Affine> prefix(3);
  ASSERT_FALSE(read_g1_file(path_, prefix));
  EXPECT_TRUE(same(prefix[2], points_[2]));
}

TEST_F(G1File, TruncatedFileIsRefusedWithItsSize) {
  Bytes b = bytes_;
  b.resize(3 * kernels::kG1EncodedBytes - 1);
  write(b);
  const auto n = g1_file_points(path_);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().what().find(path_), std::string::npos) << n.error().what();
  EXPECT_NE(n.error().what().find("287 bytes"), std::string::npos) << n.error().what();
  std::vector<G1Affine> out(2);
  const Error e = read_g1_file(path_, out);
  EXPECT_NE(e.what().find("287 bytes"), std::string::npos) << e.what();
}

TEST_F(G1File, BadPointIsNamedByIndex) {
  Bytes b = bytes_;
  b[70 * kernels::kG1EncodedBytes] |= 0x80;  // compressed flag
  b[90 * kernels::kG1EncodedBytes] |= 0x20;  // sign flag: later, so not the one named
  write(b);
  for (unsigned threads : {1u, 3u}) {
    std::vector<G1Affine> out(points_.size());
    const Error e = read_g1_file(path_, out, threads);
    ASSERT_TRUE(e);
    EXPECT_EQ(e.code, make_error_code(kernels::G1Error::compressed_flag));
    EXPECT_NE(e.what().find(path_ + ": point 70: compressed"), std::string::npos) << e.what();
  }
  std::vector<G1Affine> tail(30);
  const Error e = read_g1_file(path_, 80, tail);
  EXPECT_NE(e.what().find("point 90: sign"), std::string::npos) << e.what();
  std::vector<G1Affine> head(70);
  EXPECT_FALSE(read_g1_file(path_, head));  // the bad point is past what was asked
}

TEST_F(G1File, SmallestBadIndexWinsAcrossThreads) {
  // 12700 points: enough for three threads to decode a range each.
  Bytes b;
  for (int copy = 0; copy < 100; ++copy) b.insert(b.end(), bytes_.begin(), bytes_.end());
  b[9000 * kernels::kG1EncodedBytes] |= 0x80;
  b[5000 * kernels::kG1EncodedBytes] = 0x1f;  // x >= q
  write(b);
  std::vector<G1Affine> out(12700);
  const Error e = read_g1_file(path_, out, 3);
  EXPECT_EQ(e.code, make_error_code(kernels::G1Error::x_not_below_q)) << e.what();
  EXPECT_NE(e.what().find("point 5000: x is not below"), std::string::npos) << e.what();
}

TEST_F(G1File, EveryThreadCountReadsTheSamePoints) {
  const Bytes b = distinct_points(kManyPoints);
  write(b);
  const std::vector<G1Affine> want = decode_one_by_one(b);
  for (unsigned threads : {1u, 3u, 8u, 0u}) {
    std::vector<G1Affine> back(kManyPoints);
    const Error e = read_g1_file(path_, back, threads);
    ASSERT_FALSE(e) << threads << " threads: " << e.what();
    for (std::size_t i = 0; i < back.size(); ++i)
      ASSERT_TRUE(same(back[i], want[i])) << threads << " threads, point " << i;
  }
}

TEST_F(G1File, UnalignedSlicesReadTheirOwnPoints) {
  const Bytes b = distinct_points(kManyPoints);
  write(b);
  const std::vector<G1Affine> want = decode_one_by_one(b);
  // {first, count}: offsets and lengths that line up with no batch or range.
  const std::pair<std::size_t, std::size_t> slices[] = {
      {1, 1}, {4097, 4095}, {4099, kManyPoints - 4099 - 7}, {kManyPoints - 1, 1}, {kManyPoints, 0}};
  for (const auto& [first, count] : slices)
    for (unsigned threads : {1u, 3u, 8u}) {
      std::vector<G1Affine> back(count);
      const Error e = read_g1_file(path_, first, back, threads);
      ASSERT_FALSE(e) << first << "+" << count << ", " << threads << " threads: " << e.what();
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_TRUE(same(back[i], want[first + i]))
            << first << "+" << count << ", " << threads << " threads, point " << first + i;
    }
}

TEST_F(G1File, BadPointAtTheEndOfAnEarlyRangeBeatsOneAtTheStartOfALateRange) {
  // With eight threads, 8501 is the last point of the second thread's range
  // and 29757 the first of the eighth's, which that thread finds at once.
  Bytes b = distinct_points(kManyPoints);
  b[29757 * kernels::kG1EncodedBytes] |= 0x80;     // compressed flag
  b[8501 * kernels::kG1EncodedBytes + 48] = 0x1f;  // y >= q
  write(b);
  for (unsigned threads : {1u, 3u, 8u}) {
    std::vector<G1Affine> out(kManyPoints);
    const Error e = read_g1_file(path_, out, threads);
    EXPECT_EQ(e.code, make_error_code(kernels::G1Error::y_not_below_q)) << e.what();
    EXPECT_EQ(e.what().rfind(path_ + ": point 8501: y is not below", 0), 0u) << e.what();
  }
  // Past the first, the second is named, counted from the start of the file.
  std::vector<G1Affine> tail(kManyPoints - 8502);
  const Error e = read_g1_file(path_, 8502, tail, 8);
  EXPECT_EQ(e.code, make_error_code(kernels::G1Error::compressed_flag)) << e.what();
  EXPECT_EQ(e.what().rfind(path_ + ": point 29757: compressed", 0), 0u) << e.what();
}

TEST_F(G1File, RefusesMissingFilesAndTooFewPoints) {
  auto n = g1_file_points(path_ + ".missing");
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().what().find(path_ + ".missing"), std::string::npos);
  write(bytes_);
  std::vector<G1Affine> out(points_.size() + 1);
  const Error e = read_g1_file(path_, out);
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("holds 127 points"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace stoker::engine

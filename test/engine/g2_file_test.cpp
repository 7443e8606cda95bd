// G2 point files: what is written is read back, slices included, and every
// refusal names the file with the size or the index of the first bad point;
// the reader checks the curve (decode_g2 does) but not the subgroup.
#include "engine/g2_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernels/g2_encoding.hpp"
#include "test/kernels/g2_test_util.hpp"
#include "test/kernels/msm_cpu_test_util.hpp"

namespace stoker::engine {
namespace {

namespace fs = std::filesystem;
using kernels::G2Affine;
using kernels::kG2EncodedBytes;
using Bytes = std::vector<unsigned char>;

Bytes encode_all(const std::vector<G2Affine>& points) {
  Bytes b(points.size() * kG2EncodedBytes);
  for (std::size_t i = 0; i < points.size(); ++i)
    kernels::encode_g2(points[i], &b[i * kG2EncodedBytes]);
  return b;
}

bool same(const G2Affine& a, const G2Affine& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Enough points that eight threads get a range each (the reader gives a
// thread no fewer than 4096), and not a multiple of the thread count or of
// the 4096-point batch each thread reads at a time.
constexpr std::size_t kManyPoints = 8 * 4096 + 1234;

class G2File : public ::testing::Test {
 protected:
  // Distinct points of G2, (a + i b) G, so that a range read into the wrong
  // place shows; one at infinity.
  static void SetUpTestSuite() {
    many_ =
        new std::vector<G2Affine>(kernels::test::known_log_points<G2Affine>(kManyPoints, 2).points);
    (*many_)[5] = G2Affine::infinity();
  }
  static void TearDownTestSuite() {
    delete many_;
    many_ = nullptr;
  }
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             ("stoker_g2_file_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".g2"))
                .string();
  }
  void TearDown() override { fs::remove(path_); }

  void write(const Bytes& b) {
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  static const std::vector<G2Affine>& many() { return *many_; }
  // The first n of them.
  static std::vector<G2Affine> points(std::size_t n) {
    return {many_->begin(), many_->begin() + static_cast<std::ptrdiff_t>(n)};
  }

  std::string path_;
  static std::vector<G2Affine>* many_;
};
std::vector<G2Affine>* G2File::many_ = nullptr;

TEST_F(G2File, ReadsBackWhatWasWritten) {
  const auto want = points(128);
  write(encode_all(want));
  auto n = g2_file_points(path_);
  ASSERT_TRUE(n) << n.error().what();
  EXPECT_EQ(*n, want.size());
  for (unsigned threads : {1u, 4u}) {
    std::vector<G2Affine> back(want.size());
    const Error e = read_g2_file(path_, back, threads);
    ASSERT_FALSE(e) << e.what();
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(same(back[i], want[i])) << i;
  }
  std::vector<G2Affine> slice(10);
  ASSERT_FALSE(read_g2_file(path_, 100, slice));
  for (std::size_t i = 0; i < slice.size(); ++i) EXPECT_TRUE(same(slice[i], want[100 + i]));
}

TEST_F(G2File, TruncatedFileIsRefusedWithItsSize) {
  Bytes b = encode_all(points(3));
  b.pop_back();
  write(b);
  const auto n = g2_file_points(path_);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().what().find(path_ + ": size is 575 bytes, not a multiple of 192"),
            std::string::npos)
      << n.error().what();
  std::vector<G2Affine> out(2);
  const Error e = read_g2_file(path_, out);
  EXPECT_NE(e.what().find("575 bytes"), std::string::npos) << e.what();
}

TEST_F(G2File, BadPointIsNamedByIndex) {
  Bytes b = encode_all(points(128));
  b[70 * kG2EncodedBytes] |= 0x80;  // compressed flag
  b[90 * kG2EncodedBytes] |= 0x20;  // sign flag: later, so not the one named
  write(b);
  for (unsigned threads : {1u, 3u}) {
    std::vector<G2Affine> out(128);
    const Error e = read_g2_file(path_, out, threads);
    ASSERT_TRUE(e);
    EXPECT_EQ(e.code, make_error_code(kernels::G2Error::compressed_flag));
    EXPECT_NE(e.what().find(path_ + ": point 70: compressed"), std::string::npos) << e.what();
  }
  std::vector<G2Affine> tail(30);
  const Error e = read_g2_file(path_, 80, tail);
  EXPECT_NE(e.what().find("point 90: sign"), std::string::npos) << e.what();
  std::vector<G2Affine> head(70);
  EXPECT_FALSE(read_g2_file(path_, head));  // the bad point is past what was asked
}

TEST_F(G2File, PointsOffTheCurveAreRefusedButPointsOutsideG2AreRead) {
  std::vector<G2Affine> want = points(4);
  std::mt19937_64 rng(3);
  want[2] = kernels::test::random_e2_point(rng);
  ASSERT_TRUE(on_curve(want[2]));
  ASSERT_FALSE(in_subgroup(want[2]));
  Bytes b = encode_all(want);
  write(b);
  std::vector<G2Affine> back(4);
  const Error e = read_g2_file(path_, back);
  ASSERT_FALSE(e) << e.what();
  EXPECT_TRUE(same(back[2], want[2]));
  EXPECT_TRUE(same(back[3], want[3]));

  b[3 * kG2EncodedBytes + 191] ^= 1;
  write(b);
  const Error off = read_g2_file(path_, back);
  EXPECT_EQ(off.code, make_error_code(kernels::G2Error::not_on_curve)) << off.what();
  EXPECT_NE(off.what().find(path_ + ": point 3: point is not on the curve"), std::string::npos)
      << off.what();
}

TEST_F(G2File, EveryThreadCountReadsTheSamePoints) {
  write(encode_all(many()));
  for (unsigned threads : {1u, 3u, 8u, 0u}) {
    std::vector<G2Affine> back(kManyPoints);
    const Error e = read_g2_file(path_, back, threads);
    ASSERT_FALSE(e) << threads << " threads: " << e.what();
    for (std::size_t i = 0; i < back.size(); ++i)
      ASSERT_TRUE(same(back[i], many()[i])) << threads << " threads, point " << i;
  }
  // A slice that lines up with no batch or range.
  std::vector<G2Affine> slice(kManyPoints - 4099 - 7);
  ASSERT_FALSE(read_g2_file(path_, 4099, slice, 8));
  for (std::size_t i = 0; i < slice.size(); ++i)
    ASSERT_TRUE(same(slice[i], many()[4099 + i])) << "point " << 4099 + i;
}

TEST_F(G2File, BadPointAtTheEndOfAnEarlyRangeBeatsOneAtTheStartOfALateRange) {
  // With eight threads, 8501 is the last point of the second thread's range
  // and 29757 the first of the eighth's, which that thread finds at once.
  Bytes b = encode_all(many());
  b[29757 * kG2EncodedBytes] |= 0x80;      // compressed flag
  b[8501 * kG2EncodedBytes + 144] = 0x1f;  // y.c0 >= q
  write(b);
  for (unsigned threads : {1u, 3u, 8u}) {
    std::vector<G2Affine> out(kManyPoints);
    const Error e = read_g2_file(path_, out, threads);
    EXPECT_EQ(e.code, make_error_code(kernels::G2Error::y_c0_not_below_q)) << e.what();
    EXPECT_EQ(e.what().rfind(path_ + ": point 8501: y.c0", 0), 0u) << e.what();
  }
  std::vector<G2Affine> tail(kManyPoints - 8502);
  const Error e = read_g2_file(path_, 8502, tail, 8);
  EXPECT_EQ(e.code, make_error_code(kernels::G2Error::compressed_flag)) << e.what();
  EXPECT_EQ(e.what().rfind(path_ + ": point 29757: compressed", 0), 0u) << e.what();
}

TEST_F(G2File, RefusesMissingFilesAndTooFewPoints) {
  auto n = g2_file_points(path_ + ".missing");
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().what().find(path_ + ".missing"), std::string::npos);
  write(encode_all(points(7)));
  std::vector<G2Affine> out(8);
  const Error e = read_g2_file(path_, out);
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("holds 7 points"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace stoker::engine

// A key file's digest: the value an independent SHA-256 (Python's hashlib)
// gives for the documented construction, whatever the thread count; a
// changed byte changes it; a write changes the file's identity; a read that
// comes up short is an error naming the file.
#include "engine/groth16/key_digest.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test/engine/groth16/groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

// Two pieces: a whole 64 MiB one and 1000 bytes; byte i is (7 i + 3) mod 251.
test::Bytes two_pieces() {
  test::Bytes b((std::size_t{64} << 20) + 1000);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>((i * 7 + 3) % 251);
  return b;
}

struct OpenFile {
  int fd;
  explicit OpenFile(const std::string& path) : fd(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {}
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

TEST(KeyDigest, IsTheDocumentedSha256TreeOnAnyThreadCount) {
  test::ScratchDir dir;
  const auto path = dir.file("k", two_pieces());
  OpenFile f(path);
  ASSERT_GE(f.fd, 0);
  // hashlib: sha256("stoker key digest v1\0" + u64le(size) + sha256(piece 0) + sha256(piece 1)).
  const std::string want = "88d87a77c41051f11722f5cf74e72f573e4d3e699eeee8c38e848bb9cb102ad2";
  for (const unsigned threads : {1u, 2u, 7u}) {
    auto d = digest_key_file(f.fd, path, threads);
    ASSERT_TRUE(d) << d.error().what();
    EXPECT_EQ(d->hex(), want) << threads << " threads";
    EXPECT_EQ(d->file_bytes, (std::uint64_t{64} << 20) + 1000);
  }
}

TEST(KeyDigest, OfAnEmptyFileHashesItsSizeAlone) {
  test::ScratchDir dir;
  const auto path = dir.file("empty", {});
  OpenFile f(path);
  auto d = digest_key_file(f.fd, path);
  ASSERT_TRUE(d) << d.error().what();
  EXPECT_EQ(d->hex(), "a8eae1c99612e6666a689c7a01ae15ecce13ba65f6a7eb2d170e7bb44df1c3f3");
}

TEST(KeyDigest, OneChangedByteAnywhereChangesIt) {
  test::ScratchDir dir;
  test::Bytes b(3000, 0x5a);
  const auto path = dir.file("k", b);
  OpenFile f(path);
  auto before = digest_key_file(f.fd, path);
  ASSERT_TRUE(before);
  for (const std::size_t at : {std::size_t{0}, std::size_t{1499}, std::size_t{2999}}) {
    auto c = b;
    c[at] ^= 1;
    const auto other = dir.file("c", c);
    OpenFile g(other);
    auto d = digest_key_file(g.fd, other);
    ASSERT_TRUE(d);
    EXPECT_NE(d->hex(), before->hex()) << "byte " << at;
  }
}

TEST(KeyDigest, AWriteChangesTheFilesIdentity) {
  test::ScratchDir dir;
  const auto path = dir.file("k", test::Bytes(4096, 1));
  OpenFile f(path);
  auto before = identity_of(f.fd, path);
  ASSERT_TRUE(before);
  auto same = identity_of(f.fd, path);
  ASSERT_TRUE(same);
  EXPECT_EQ(*before, *same);
  // Past the file system's timestamp granularity (a kernel tick).
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const unsigned char byte = 2;
  ASSERT_EQ(::pwrite(f.fd, &byte, 1, 100), 1);
  auto after = identity_of(f.fd, path);
  ASSERT_TRUE(after);
  EXPECT_NE(*before, *after);
  EXPECT_EQ(before->size, after->size);
}

TEST(KeyDigest, AFileThatCannotBeReadIsAnErrorNamingIt) {
  test::ScratchDir dir;
  const auto path = dir.file("k", test::Bytes(100, 1));
  // Opened for writing only: every read fails.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto d = digest_key_file(fd, "the key " + path);
  ::close(fd);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().what().find("the key " + path + ": digest: read of 100 bytes at byte 0"),
            std::string::npos)
      << d.error().what();
}

}  // namespace
}  // namespace stoker::engine::groth16

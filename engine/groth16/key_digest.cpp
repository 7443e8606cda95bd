// A key file's digest and identity; see key_digest.hpp.
#include "engine/groth16/key_digest.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace stoker::engine::groth16 {
namespace {

constexpr std::uint64_t kPieceBytes = std::uint64_t{64} << 20;
// One pread at a time into a buffer that stays in a core's L2/L3.
constexpr std::size_t kReadBytes = std::size_t{1} << 20;
constexpr char kTag[] = "stoker key digest v1";

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

// SHA-256 in parts: init, update..., final into `out`.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    ok_ = ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
  }
  void update(const void* p, std::size_t n) {
    ok_ = ok_ && EVP_DigestUpdate(ctx_.get(), p, n) == 1;
  }
  bool finish(std::array<std::uint8_t, 32>& out) {
    unsigned len = 0;
    ok_ = ok_ && EVP_DigestFinal_ex(ctx_.get(), out.data(), &len) == 1 && len == out.size();
    return ok_;
  }

 private:
  MdCtx ctx_;
  bool ok_ = false;
};

std::int64_t nanoseconds(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

Result<FileIdentity> identity_of(int fd, const std::string& label) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Error{Errc::io_error, label + ": " + std::generic_category().message(errno)};
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::uint64_t>(st.st_size), nanoseconds(st.st_mtim),
                      nanoseconds(st.st_ctim)};
}

std::string KeyDigest::hex() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (const auto b : sha256) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

Result<KeyDigest> digest_key_file(int fd, const std::string& label, unsigned threads) {
  auto before = identity_of(fd, label);
  if (!before) return before.error();
  const std::uint64_t size = before->size;
  const std::uint64_t pieces = (size + kPieceBytes - 1) / kPieceBytes;
  std::vector<std::array<std::uint8_t, 32>> piece_digests(pieces);

  std::atomic<std::uint64_t> next{0};
  std::mutex failure_mutex;
  Error failure;
  auto fail = [&](Error e) {
    std::lock_guard lock(failure_mutex);
    if (!failure) failure = std::move(e);
    next.store(pieces);  // the others stop at their next piece
  };
  auto work = [&] {
    std::unique_ptr<unsigned char[]> buffer(new unsigned char[kReadBytes]);
    for (std::uint64_t p; (p = next.fetch_add(1)) < pieces;) {
      Sha256 h;
      const std::uint64_t begin = p * kPieceBytes, end = std::min(size, begin + kPieceBytes);
      for (std::uint64_t at = begin; at < end;) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBytes, end - at));
        const ssize_t n = ::pread(fd, buffer.get(), want, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const std::string why =
              n < 0 ? std::generic_category().message(errno) : "the file ended early";
          return fail(Error{Errc::io_error, label + ": digest: read of " + std::to_string(want) +
                                                " bytes at byte " + std::to_string(at) +
                                                " failed: " + why});
        }
        h.update(buffer.get(), static_cast<std::size_t>(n));
        at += static_cast<std::uint64_t>(n);
      }
      if (!h.finish(piece_digests[p]))
        return fail(Error{Errc::io_error, label + ": digest: SHA-256 failed in OpenSSL"});
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const auto n_threads =
      static_cast<unsigned>(std::min<std::uint64_t>(threads ? threads : hw, std::max<std::uint64_t>(pieces, 1)));
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < n_threads; ++t) pool.emplace_back(work);
    work();
  }
  if (failure) return failure;

  auto after = identity_of(fd, label);
  if (!after) return after.error();
  if (!(*after == *before))
    return Error{Errc::io_error, label + ": the file changed while its digest was taken"};

  KeyDigest out;
  out.file_bytes = size;
  out.identity = *before;
  Sha256 root;
  root.update(kTag, sizeof kTag);  // with its terminating zero
  std::uint8_t size_le[8];
  for (int i = 0; i < 8; ++i) size_le[i] = static_cast<std::uint8_t>(size >> (8 * i));
  root.update(size_le, sizeof size_le);
  for (const auto& d : piece_digests) root.update(d.data(), d.size());
  if (!root.finish(out.sha256))
    return Error{Errc::io_error, label + ": digest: SHA-256 failed in OpenSSL"};
  return out;
}

}  // namespace stoker::engine::groth16

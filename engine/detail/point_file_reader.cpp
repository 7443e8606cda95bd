// Point file reading; see point_file_reader.hpp.
#include "engine/detail/point_file_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "kernels/detail/parallel.hpp"

namespace stoker::engine::detail {
namespace {

// Points each thread reads and decodes at a time: small enough to stay in
// a core's cache between the copy out of the page cache and the decode
// (384 KiB of G1, 768 KiB of G2), and the smallest range worth a thread of
// its own.
constexpr std::size_t kBatchPoints = 4096;

// Owns a file descriptor; closes it on every path.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_;
};

// Reads `bytes` at `offset`, across short reads and signals. Fewer bytes
// come back when the file ended (error 0) or a read failed (error: errno).
struct ReadResult {
  std::size_t bytes;
  int error;
};
ReadResult pread_all(int fd, unsigned char* buf, std::size_t bytes, off_t offset) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, buf + done, bytes - done, offset + static_cast<off_t>(done));
    if (n > 0)
      done += static_cast<std::size_t>(n);
    else if (n == 0)
      return {done, 0};
    else if (errno != EINTR)
      return {done, errno};
  }
  return {done, 0};
}

// Why a thread stopped before the end of its range, at point `at` of the
// range asked for.
struct Stop {
  enum Kind { decode, read, memory };
  static constexpr std::size_t none = static_cast<std::size_t>(-1);  // it did not stop
  std::size_t at = none;
  Kind kind = decode;
  std::error_code why;  // the decode error, or errno of a failed read (none: the file ended)
};

}  // namespace

Result<std::size_t> point_file_points(const std::string& path, const PointFileFormat& format) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error{Errc::io_error, path + ": cannot read (is a directory)"};
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Error{Errc::io_error, path + ": cannot read (" + ec.message() + ")"};
  if (size % format.point_bytes)
    return Error{Errc::invalid_argument,
                 path + ": size is " + std::to_string(size) + " bytes, not a multiple of " +
                     std::to_string(format.point_bytes) + " (" + format.points + ")"};
  return static_cast<std::size_t>(size / format.point_bytes);
}

Error read_point_file(const std::string& path, const PointFileFormat& format, std::size_t first,
                      std::size_t count, const DecodePoint& decode, unsigned threads) {
  const std::size_t bytes = format.point_bytes;
  try {
    auto total = point_file_points(path, format);
    if (!total) return std::move(total).error();
    if (first > *total || count > *total - first)
      return Error{Errc::invalid_argument, path + ": holds " + std::to_string(*total) +
                                               " points, not the " + std::to_string(count) +
                                               " asked for from point " + std::to_string(first)};
    if (count == 0) return {};
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
      return Error{Errc::io_error,
                   path + ": cannot open (" + std::generic_category().message(errno) + ")"};

    // One slot per thread that parallel_for may start; each thread writes
    // only its own, and stops at its first failure, so the smallest `at`
    // over all slots is the first failure in the file.
    std::vector<Stop> stops(kernels::detail::resolve_threads(threads));
    kernels::detail::parallel_for(
        count, threads,
        [&](std::size_t thread, std::size_t b, std::size_t e) {
          Stop& stop = stops[thread];
          // Allocated by the thread that uses it, as only parallel_for knows
          // how many threads it starts; nothrow, as an exception escaping a
          // worker thread would end the process.
          const std::size_t batch = std::min(kBatchPoints, e - b);
          const std::unique_ptr<unsigned char[]> buf(
              new (std::nothrow) unsigned char[batch * bytes]);
          if (!buf) {
            stop = {b, Stop::memory, {}};
            return;
          }
          for (std::size_t i = b; i < e; i += batch) {
            const std::size_t n = std::min(batch, e - i);
            const ReadResult r =
                pread_all(fd.get(), buf.get(), n * bytes, static_cast<off_t>((first + i) * bytes));
            const std::size_t got = r.bytes / bytes;
            // The whole points that did arrive are decoded first: a bad one
            // among them comes before the point that could not be read.
            for (std::size_t k = 0; k < got; ++k)
              if (auto ec = decode(&buf[k * bytes], i + k)) {
                stop = {i + k, Stop::decode, ec};
                return;
              }
            if (got < n) {
              stop = {i + got, Stop::read, std::error_code(r.error, std::generic_category())};
              return;
            }
          }
        },
        /*grain=*/kBatchPoints);

    const Stop& s = *std::min_element(stops.begin(), stops.end(),
                                      [](const Stop& a, const Stop& b) { return a.at < b.at; });
    if (s.at == Stop::none) return {};
    const std::string point = std::to_string(first + s.at);
    if (s.kind == Stop::decode)
      return Error{s.why, path + ": point " + point + ": " + s.why.message()};
    if (s.kind == Stop::read)
      return Error{Errc::io_error, path + ": read failed at point " + point + " (" +
                                       (s.why ? s.why.message() : "the file ended") + ")"};
    return common::host_memory_refused(path + ": a read buffer", kBatchPoints * bytes);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the points");
  }
}

}  // namespace stoker::engine::detail

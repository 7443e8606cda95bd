// Plain file access for the Groth16 files; see file_io.hpp.
#include "engine/groth16/detail/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace stoker::engine::groth16::detail {

Result<InputFile> InputFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return Error{Errc::io_error, path + ": cannot open: " + std::generic_category().message(e)};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{Errc::io_error, path + ": cannot open: not a regular file"};
  }
  return InputFile(fd, path, static_cast<std::uint64_t>(st.st_size));
}

Result<InputFile> InputFile::open_window(int fd, std::string label, std::uint64_t offset,
                                         std::uint64_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Error{Errc::io_error, label + ": " + std::generic_category().message(errno)};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (offset > size || bytes > size - offset)
    return Error{Errc::invalid_argument, label + ": bytes " + std::to_string(offset) + ".." +
                                             std::to_string(offset + bytes) + " run past its " +
                                             std::to_string(size) + " bytes"};
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return Error{Errc::io_error, label + ": " + std::generic_category().message(errno)};
  return InputFile(copy, std::move(label), bytes, offset);
}

InputFile::InputFile(InputFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), size_(o.size_), base_(o.base_) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Error InputFile::read(std::uint64_t offset, void* dst, std::size_t bytes,
                      std::string_view what) const {
  auto* out = static_cast<unsigned char*>(dst);
  std::size_t done = 0;
  while (done < bytes) {
    // Linux moves at most about 2 GiB per call; ask for 1 GiB at a time.
    const std::size_t want = std::min<std::size_t>(bytes - done, std::size_t{1} << 30);
    const ssize_t n = ::pread(fd_, out + done, want, static_cast<off_t>(base_ + offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int e = n < 0 ? errno : 0;
    return Error{Errc::io_error, path_ + (what.empty() ? "" : ": " + std::string(what)) +
                                     ": read of " + std::to_string(bytes) + " bytes at byte " +
                                     std::to_string(offset) + " failed: " +
                                     (e ? std::generic_category().message(e)
                                        : "the file ended (it changed while being read)")};
  }
  return {};
}

Result<OutputFile> OutputFile::create(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    const int e = errno;
    return Error{Errc::io_error, path + ": cannot create: " + std::generic_category().message(e)};
  }
  std::setvbuf(f, nullptr, _IOFBF, std::size_t{1} << 20);
  return OutputFile(f, path);
}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : f_(std::exchange(o.f_, nullptr)),
      path_(std::move(o.path_)),
      written_(o.written_),
      closed_(o.closed_) {}

OutputFile::~OutputFile() {
  if (!f_) return;
  std::fclose(f_);
  if (!closed_) std::remove(path_.c_str());
}

Error OutputFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, f_) != bytes) {
    const int e = errno ? errno : EIO;
    return Error{Errc::io_error, path_ + ": write failed at byte " + std::to_string(written_) +
                                     ": " + std::generic_category().message(e)};
  }
  written_ += bytes;
  return {};
}

Error OutputFile::write_u32_le(std::uint32_t v) {
  unsigned char b[4];
  store_u32_le(v, b);
  return write(b, 4);
}

Error OutputFile::write_u64_le(std::uint64_t v) {
  unsigned char b[8];
  store_u32_le(static_cast<std::uint32_t>(v), b);
  store_u32_le(static_cast<std::uint32_t>(v >> 32), b + 4);
  return write(b, 8);
}

Error OutputFile::close() {
  std::FILE* f = std::exchange(f_, nullptr);
  if (std::fflush(f) != 0 || std::ferror(f)) {
    const int e = errno ? errno : EIO;
    std::fclose(f);
    std::remove(path_.c_str());
    return Error{Errc::io_error, path_ + ": write failed: " + std::generic_category().message(e)};
  }
  if (std::fclose(f) != 0) {
    const int e = errno ? errno : EIO;
    std::remove(path_.c_str());
    return Error{Errc::io_error, path_ + ": closing failed: " + std::generic_category().message(e)};
  }
  closed_ = true;
  return {};
}

}  // namespace stoker::engine::groth16::detail

#include "tools/cli/detail/staged_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace stoker::tools::detail {
namespace {

Error cannot(const std::string& path, const std::string& why) {
  return {Errc::io_error, "cannot write " + path + ": " + why};
}

// Closes `fd` once, at the end of the scope unless released.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string directory_of(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

StagedFile::StagedFile(std::string path, std::string target, std::string temporary,
                       std::unique_ptr<TemporaryFile> guard)
    : path_(std::move(path)),
      target_(std::move(target)),
      temporary_(std::move(temporary)),
      guard_(std::move(guard)) {}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temporary_(std::exchange(other.temporary_, {})),
      guard_(std::move(other.guard_)) {}

StagedFile& StagedFile::operator=(StagedFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    temporary_ = std::exchange(other.temporary_, {});
    guard_ = std::move(other.guard_);
  }
  return *this;
}

StagedFile::~StagedFile() {
  discard();
}

void StagedFile::discard() noexcept {
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
  guard_.reset();
}

Result<StagedFile> StagedFile::make(std::string path, std::string target, const Fill& fill) {
  const std::string dir = directory_of(target);
  sweep_stale_temporaries(dir, target);
  std::string tmp = temporary_template(dir, target);
  // Made and registered with the fatal signals blocked, so that no signal
  // can leave it behind.
  auto guard = std::make_unique<TemporaryFile>(tmp);
  FdCloser fd{guard->fd()};
  if (fd.fd < 0) return cannot(path, "temporary file in " + dir + ": " + std::strerror(errno));
  // From here on the temporary is removed on every path but a commit.
  StagedFile staged(std::move(path), std::move(target), tmp, std::move(guard));
  if (Error e = fill(fd.fd, tmp)) return e;
  // A replaced file keeps its permission bits; a new one gets what open()
  // would have given it (mkstemp makes 0600).
  struct stat st {};
  mode_t mode;
  if (::stat(staged.target_.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  // fsync() syncs the file, whichever descriptor wrote it: a Fill that
  // wrote through a descriptor of its own is covered too.
  if (::fchmod(fd.fd, mode) != 0 || ::fsync(fd.fd) != 0)
    return cannot(staged.path_, std::strerror(errno));
  const int closing = std::exchange(fd.fd, -1);
  if (::close(closing) != 0) return cannot(staged.path_, std::strerror(errno));
  return staged;
}

Error StagedFile::commit() {
  if (temporary_.empty()) return cannot(path_, "nothing staged to commit");
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    return cannot(path_, std::strerror(err));
  }
  temporary_.clear();
  guard_.reset();
  // The rename itself survives a crash only once the directory is synced;
  // the file is complete either way, so a failure here changes nothing.
  if (const int dfd = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace stoker::tools::detail

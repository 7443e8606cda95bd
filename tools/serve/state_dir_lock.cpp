// StateDirLock; see state_dir_lock.hpp.
#include "tools/serve/state_dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace stoker::serve {

Result<StateDirLock> StateDirLock::acquire(const std::filesystem::path& state_dir) {
  const std::string path = (state_dir / "lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return Error{Errc::io_error, path + ": " + std::generic_category().message(errno)};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char buf[32] = {};
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (e != EWOULDBLOCK)
      return Error{Errc::io_error, path + ": flock: " + std::generic_category().message(e)};
    std::string pid(buf, got > 0 ? static_cast<std::size_t>(got) : 0);
    pid.erase(pid.find_last_not_of(" \n") + 1);
    return Error{Errc::invalid_argument,
                 "the state directory " + state_dir.string() + " is in use by another stoker serve" +
                     (pid.empty() ? "" : " (pid " + pid + ")") + ": one daemon per state directory"};
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int e = errno;
    ::close(fd);
    return Error{Errc::io_error, path + ": " + std::generic_category().message(e)};
  }
  return StateDirLock(fd);
}

StateDirLock::~StateDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace stoker::serve

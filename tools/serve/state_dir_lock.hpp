// The one daemon a state directory may have. Two `stoker serve` processes
// on one --state-dir would each recover the other's unfinished proofs from
// the journal, run them twice and reload every key twice; the lock (an
// flock on `lock` in the directory, which also holds the holder's pid)
// refuses the second one before it opens the journal. The kernel drops the
// lock when the process ends, kill -9 included, so a restart never finds a
// stale one.
#pragma once

#include <filesystem>

#include "common/error.hpp"

namespace stoker::serve {

class StateDirLock {
 public:
  // Errors: the directory is locked by another process (naming its pid when
  // the lock file holds one), or the lock file cannot be opened or written.
  static Result<StateDirLock> acquire(const std::filesystem::path& state_dir);

  StateDirLock(StateDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StateDirLock& operator=(StateDirLock&&) = delete;
  StateDirLock(const StateDirLock&) = delete;
  ~StateDirLock();

 private:
  explicit StateDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace stoker::serve

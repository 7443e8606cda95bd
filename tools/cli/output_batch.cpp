#include "tools/cli/output_batch.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace stoker::tools {

Error OutputBatch::stage(const OutputFile& file, const detail::StagedFile::Fill& fill) {
  // Checked again: the path may have changed since the command started, and
  // a rename over a FIFO or a device would replace it.
  auto now = OutputFile::check(file.path());
  auto staged = now ? detail::StagedFile::make(now->path(), now->target(), fill)
                    : Result<detail::StagedFile>(now.error());
  if (!staged) {
    staged_.clear();
    return staged.error();
  }
  staged_.push_back(std::move(*staged));
  return {};
}

Error OutputBatch::add(const OutputFile& file, std::string_view bytes) {
  return stage(file, [&](int fd, const std::string&) -> Error {
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return {Errc::io_error, "cannot write " + file.path() + ": " + std::strerror(errno)};
      }
      done += static_cast<std::size_t>(n);
    }
    return {};
  });
}

Error OutputBatch::add(const OutputFile& file,
                       const std::function<Error(const std::string& path)>& write_to) {
  return stage(file, [&](int, const std::string& temporary) -> Error {
    Error e = write_to(temporary);
    if (!e) return {};
    // Writers name the file they wrote, the temporary: the user knows the
    // output's own path.
    std::string why = e.what();
    if (const std::string named = temporary + ": "; why.starts_with(named))
      why.erase(0, named.size());
    return {e.code, "cannot write " + file.path() + ": " + why};
  });
}

Error OutputBatch::commit() {
  for (const auto& s : staged_)
    if (auto now = OutputFile::check(s.path()); !now) {
      staged_.clear();
      return now.error();
    }
  for (auto& s : staged_)
    if (Error e = s.commit()) {
      staged_.clear();
      return e;
    }
  staged_.clear();
  return {};
}

}  // namespace stoker::tools

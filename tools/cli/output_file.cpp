#include "tools/cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "tools/cli/temporary_files.hpp"

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) {
  return std::strerror(err);
}

Error cannot(const std::string& path, const std::string& why) {
  return {Errc::io_error, "cannot write " + path + ": " + why};
}

// The directory that holds `file` ("." for a bare name).
std::string directory_of(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Closes `fd` once, at the end of the scope unless released.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

const char* file_kind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

Result<OutputFile> OutputFile::check(std::string path) {
  if (path.empty()) return Error{Errc::invalid_argument, "an output path must not be empty"};
  // Follow links by hand, not with realpath(): a link to a file that does not
  // exist yet is fine (the write creates the file it names).
  std::string target = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) != 0) {
      if (errno != ENOENT) return cannot(path, reason(errno));
      // A link whose text names no file may still lead to one that stat()
      // reaches: /dev/stdout into a pipe is /proc/self/fd/1, which reads
      // "pipe:[N]". Such a file cannot be replaced by name.
      if (target != path && ::stat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode))
          return Error{Errc::invalid_argument, path + ": is " + file_kind(st.st_mode) +
                                                   ", not a regular file; refusing to replace it"};
        return cannot(path, "its links lead to " + target + ", which names no file");
      }
      break;  // a new file: its directory decides
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops == 40) return cannot(path, reason(ELOOP));
      std::error_code ec;
      const fs::path to = fs::read_symlink(target, ec);
      if (ec) return cannot(path, ec.message());
      target = to.is_absolute() ? to.string() : (fs::path(directory_of(target)) / to).string();
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      std::string what = path + ": is " + file_kind(st.st_mode) + ", not a regular file";
      if (target != path) what += " (the links lead to " + target + ")";
      return Error{Errc::invalid_argument, what + "; refusing to replace it"};
    }
    if (::access(target.c_str(), W_OK) != 0) return cannot(path, reason(errno));
    break;
  }
  const std::string dir = directory_of(target);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0) return cannot(path, "directory " + dir + ": " + reason(errno));
  if (!S_ISDIR(ds.st_mode)) return cannot(path, dir + ": " + reason(ENOTDIR));
  // The temporary file and the rename need both.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return cannot(path, "directory " + dir + ": " + reason(errno));
  return OutputFile(std::move(path), std::move(target));
}

Error OutputFile::write(std::string_view bytes) const {
  // Checked again: the path may have changed since the command started, and
  // a rename over a FIFO or a device would replace it.
  auto now = check(path_);
  if (!now) return now.error();
  const std::string& target = now->target_;
  const std::string dir = directory_of(target);
  sweep_stale_temporaries(dir, target);
  std::string tmp = temporary_template(dir, target);
  // Made and registered with the fatal signals blocked, so that no signal
  // can leave it behind.
  const TemporaryFile guard(tmp);
  FdCloser fd{guard.fd()};
  if (fd.fd < 0) return cannot(path_, "temporary file in " + dir + ": " + reason(errno));
  const auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    return cannot(path_, reason(err));
  };
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  // A replaced file keeps its permission bits; a new one gets what open()
  // would have given it (mkstemp makes 0600).
  struct stat st {};
  mode_t mode;
  if (::stat(target.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd.fd, mode) != 0) return fail(errno);
  if (::fsync(fd.fd) != 0) return fail(errno);
  const int closing = fd.fd;
  fd.fd = -1;
  if (::close(closing) != 0) return fail(errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) return fail(errno);
  // The rename itself survives a crash only once the directory is synced;
  // the file is complete either way, so a failure here changes nothing.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Error OutputFile::not_input(std::string_view out_option, std::string_view in_option,
                            const std::string& input) const {
  struct stat out {
  }, in{};
  if (::stat(target_.c_str(), &out) != 0 || ::stat(input.c_str(), &in) != 0) return {};
  if (out.st_dev != in.st_dev || out.st_ino != in.st_ino) return {};
  return {Errc::invalid_argument, std::string(out_option) + " " + path_ + " is the same file as " +
                                      std::string(in_option) + " " + input +
                                      "; refusing to replace an input"};
}

Error OutputFile::write(const std::function<void(std::ostream&)>& fill) const {
  std::ostringstream s;
  fill(s);
  return write(std::string_view(s.view()));
}

Result<NamedOutputs> check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                   const std::vector<std::pair<std::string, std::string>>& inputs) {
  NamedOutputs out;
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    auto file = OutputFile::check(path);
    if (!file) return file.error();
    for (const auto& [in_option, in_path] : inputs)
      if (auto e = file->not_input(option, in_option, in_path)) return e;
    for (const auto& [other, earlier] : out)
      if (earlier.target() == file->target())
        return Error{Errc::invalid_argument,
                     option + " and " + other + " name the same file, " + path};
    out.emplace_back(option, std::move(*file));
  }
  return out;
}

const OutputFile* output(const NamedOutputs& outputs, std::string_view option) {
  for (const auto& [o, f] : outputs)
    if (o == option) return &f;
  return nullptr;
}

}  // namespace stoker::tools

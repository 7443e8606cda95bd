#include "tools/cli/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "tools/cli/detail/staged_file.hpp"
#include "tools/cli/output_batch.hpp"

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) {
  return std::strerror(err);
}

Error cannot(const std::string& path, const std::string& why) {
  return {Errc::io_error, "cannot write " + path + ": " + why};
}

using detail::directory_of;

// Whether outputs `a` and `b` (targets, links followed) are one file: the
// same inode where both exist, else the same path once made absolute with
// "." and ".." and the links of its existing directories resolved, so that
// "x", "./x" and "d/../x" are one file before any of them is written.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  if (ea || eb) return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
  return ca == cb;
}

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
  OutputBatch batch;
  if (Error e = batch.add(*this, bytes)) return e;
  return batch.commit();
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
      if (same_file(earlier.target(), file->target()))
        return Error{Errc::invalid_argument, other + " " + earlier.path() + " and " + option + " " +
                                                 path + " name the same file"};
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

// The record of checked key files; see checked_keys.hpp.
#include "engine/groth16/checked_keys.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "common/elapsed.hpp"

namespace stoker::engine::groth16 {
namespace {

namespace fs = std::filesystem;

// What a line's digest vouches for: every point on its curve and in the
// prime-order group, by the checks as they are now. A change to the
// checks takes a new tag.
constexpr char kCheckTag[] = "v1";

std::string errno_text() { return std::generic_category().message(errno); }

// Closes an fd (its flock goes with it).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A record this user alone may write: owned by them, not writable by group
// or others, a regular file.
Error trusted(int fd, const fs::path& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Error{Errc::io_error, file.string() + ": " + errno_text()};
  if (!S_ISREG(st.st_mode))
    return Error{Errc::invalid_argument, file.string() + ": not a regular file"};
  if (st.st_uid != ::geteuid())
    return Error{Errc::invalid_argument,
                 file.string() + ": owned by uid " + std::to_string(st.st_uid) +
                     ", not by this user: a record of checked keys must be the user's own"};
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Error{Errc::invalid_argument,
                 file.string() +
                     ": writable by its group or others: whoever writes it could have a bad key "
                     "load unchecked (chmod 600 it)"};
  return {};
}

std::string line_of(const KeyDigest& d) {
  return std::string(kCheckTag) + " " + d.hex() + " " + std::to_string(d.file_bytes);
}

// Whether the text holds `line` as a whole line.
bool holds(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

Result<std::string> read_all(int fd, const fs::path& file) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{Errc::io_error, file.string() + ": " + errno_text()};
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

// The record's text, none when it does not exist; read under a shared lock
// once it is known to be the user's own.
Result<std::optional<std::string>> read_record(const fs::path& file) {
  Fd f{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (f.fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return Error{Errc::io_error, file.string() + ": cannot open: " + errno_text()};
  }
  if (Error e = trusted(f.fd, file)) return e;
  if (::flock(f.fd, LOCK_SH) != 0)
    return Error{Errc::io_error, file.string() + ": cannot lock: " + errno_text()};
  auto text = read_all(f.fd, file);
  if (!text) return text.error();
  return std::optional<std::string>{std::move(*text)};
}

}  // namespace

std::optional<fs::path> CheckedKeys::user_file() {
  auto set = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  if (const char* d = set("STOKER_CACHE_DIR")) return fs::path(d) / "checked-keys";
  if (const char* d = set("XDG_CACHE_HOME")) return fs::path(d) / "stoker" / "checked-keys";
  if (const char* d = set("HOME")) return fs::path(d) / ".cache" / "stoker" / "checked-keys";
  return std::nullopt;
}

Result<bool> CheckedKeys::contains(const KeyDigest& d) const {
  auto text = read_record(file_);
  if (!text) return text.error();
  return *text && holds(**text, line_of(d));
}

Result<bool> CheckedKeys::may_hold(std::uint64_t file_bytes) const {
  auto text = read_record(file_);
  if (!text) return text.error();
  if (!*text) return false;
  const std::string tag = std::string(kCheckTag) + " ";
  const std::string size = " " + std::to_string(file_bytes);
  std::istringstream in(**text);
  for (std::string l; std::getline(in, l);)
    if (l.starts_with(tag) && l.ends_with(size)) return true;
  return false;
}

Result<CheckedKeys::Lookup> CheckedKeys::look_up(int fd, const std::string& label, bool recheck,
                                                 unsigned threads) const {
  const auto start = std::chrono::steady_clock::now();
  auto digest = digest_key_file(fd, label, threads);
  if (!digest) return digest.error();
  Lookup out;
  out.digest = *digest;
  out.digest_s = common::seconds_since(start);
  if (recheck) return out;
  auto held = contains(out.digest);
  if (held)
    out.recorded = *held;
  else
    out.note = held.error().what();
  return out;
}

Error CheckedKeys::add(const KeyDigest& d) const {
  const fs::path dir = file_.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      fs::create_directories(dir, ec);
      if (ec) return Error{Errc::io_error, dir.string() + ": cannot create: " + ec.message()};
      fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    }
  }
  Fd f{::open(file_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)};
  if (f.fd < 0) return Error{Errc::io_error, file_.string() + ": cannot open: " + errno_text()};
  if (Error e = trusted(f.fd, file_)) return e;
  if (::flock(f.fd, LOCK_EX) != 0)
    return Error{Errc::io_error, file_.string() + ": cannot lock: " + errno_text()};
  auto text = read_all(f.fd, file_);
  if (!text) return text.error();
  const std::string line = line_of(d);
  if (holds(*text, line)) return {};
  std::string out;
  if (text->empty())
    out = "# stoker: key files whose every point passed the curve and subgroup checks\n";
  else if (text->back() != '\n')
    out = "\n";  // a line cut short by a crash stays a line of its own
  out += line + "\n";
  for (std::size_t done = 0; done < out.size();) {
    const ssize_t n = ::write(f.fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{Errc::io_error, file_.string() + ": cannot write: " + errno_text()};
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(f.fd) != 0)
    return Error{Errc::io_error, file_.string() + ": cannot sync: " + errno_text()};
  return {};
}

}  // namespace stoker::engine::groth16

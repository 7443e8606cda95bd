// What every stoker command does first: answer -h/--help, build the
// engine Config from STOKER_* variables and the engine options on its
// command line (consumed from `args`), and create the files it will write
// once its work is done, naming the command in any error.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "engine/config.hpp"

namespace stoker::tools {

// The engine options every engine-running command accepts (engine/config.hpp).
inline constexpr const char* kEngineOptionsHelp =
    "engine options: --backend auto|cuda|host --devices 0,1 --host-devices N --slowdown 1,2\n"
    "  --depth N --host-budget-mib M --device-budget-mib M --workers N\n"
    "  --chunk-mib M (or --chunk-kib K) --staging-threads N --staging-ring-mib M\n"
    "  --pageable-inputs stage|register --early-upload on|off --bind-threads on|off\n"
    "  --copy-priority low|normal|high --compute-priority low|normal|high\n";

// Prints `help` and returns true when the arguments ask for it.
inline bool print_help_if_asked(const std::vector<std::string>& args, const char* help) {
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(help, stdout);
      return true;
    }
  return false;
}

// nullopt after printing "stoker <command>: <what is wrong>" to stderr.
inline std::optional<engine::Config> engine_config(const char* command,
                                                   std::vector<std::string>& args) {
  auto base = engine::Config::from_env();
  if (!base) {
    std::fprintf(stderr, "stoker %s: %s\n", command, base.error().what().c_str());
    return std::nullopt;
  }
  auto config = base->apply_args(args);
  if (!config) {
    std::fprintf(stderr, "stoker %s: %s\n", command, config.error().what().c_str());
    return std::nullopt;
  }
  return std::move(*config);
}

// A file the command writes once its work is done, checked before that
// work: create() opens `path` for appending, which creates it but
// truncates nothing, so a path that cannot be written fails first. write()
// then replaces the contents. A command that ends without writing (no
// device, a job that could not be built) leaves the path as it found it:
// a file create() made is removed, a file that was there keeps its bytes.
class OutputFile {
 public:
  // nullopt after printing "stoker <command>: cannot create <path>: <reason>".
  static std::optional<OutputFile> create(const char* command, std::string path) {
    std::error_code ec;
    // A link counts as there, dangling or not: removing it would not leave
    // the path as it was.
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
    errno = 0;
    if (!std::ofstream(path, std::ios::app)) {
      std::fprintf(stderr, "stoker %s: cannot create %s: %s\n", command, path.c_str(),
                   errno ? std::strerror(errno) : "unknown error");
      return std::nullopt;
    }
    return OutputFile(command, std::move(path), existed);
  }
  OutputFile(OutputFile&& o) noexcept
      : command_(o.command_), path_(std::move(o.path_)), existed_(o.existed_), done_(o.done_) {
    o.done_ = true;
  }
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile() {
    std::error_code ec;
    if (!done_ && !existed_ && std::filesystem::is_regular_file(path_, ec))
      std::filesystem::remove(path_, ec);
  }

  // Replaces the contents with what `fill(std::ostream&)` writes; false
  // after printing "stoker <command>: could not write <what> to <path>:
  // <reason>".
  template <typename Fill>
  bool write(Fill&& fill, const char* what) {
    done_ = true;
    errno = 0;
    std::ofstream f(path_, std::ios::trunc);
    if (f) fill(f);
    if (f) errno = 0;  // else keep the reason a write already failed for
    f.close();
    if (!f) {
      std::fprintf(stderr, "stoker %s: could not write %s to %s: %s\n", command_, what,
                   path_.c_str(), errno ? std::strerror(errno) : "unknown error");
      return false;
    }
    return true;
  }

 private:
  OutputFile(const char* command, std::string path, bool existed)
      : command_(command), path_(std::move(path)), existed_(existed) {}
  const char* command_;
  std::string path_;
  bool existed_ = false, done_ = false;
};

}  // namespace stoker::tools

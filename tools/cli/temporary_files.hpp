// The temporary files OutputFile writes before it renames them over their
// targets (tools/cli/output_file.hpp), named ".<target name>.<pid>.XXXXXX"
// in the target's directory, and what keeps them from being left behind:
//
// - A TemporaryFile registers its path for as long as it lives. While any
//   is registered, every fatal signal that can be caught and that the
//   process leaves at its default action (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
//   SIGPIPE, SIGXFSZ, SIGXCPU, SIGSEGV, SIGBUS, ...) is handled: the handler
//   removes the registered files, then the signal takes its default action,
//   so the process still ends as the signal says. A signal that has a
//   handler of someone else's, or is ignored, is left alone.
// - SIGKILL cannot be caught: sweep_stale_temporaries(), called when a
//   write to a target starts, removes that target's temporaries whose
//   process no longer exists. A live writer's temporary is never removed.
//
// At most kMaxTemporaries files are registered at once (further ones are
// written, just not guarded). Registration is thread-safe; the handler only
// calls unlink(), sigaction() and raise(), which are async-signal-safe.
#pragma once

#include <string>

namespace stoker::tools {

inline constexpr int kMaxTemporaries = 16;

class TemporaryFile {
 public:
  // Creates the file as mkstemp(path_template) does (the X's filled in
  // `path_template`), with the fatal signals blocked until it is
  // registered. fd() is its descriptor, -1 with errno set on failure; the
  // caller closes it. Destruction only unregisters: the caller renames or
  // removes the file.
  explicit TemporaryFile(std::string& path_template);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int fd() const { return fd_; }

 private:
  int slot_ = -1;
  int fd_ = -1;
};

// The mkstemp template for a temporary of `target` in `dir`.
std::string temporary_template(const std::string& dir, const std::string& target);

// Removes `target`'s temporaries in `dir` left by processes that are gone.
void sweep_stale_temporaries(const std::string& dir, const std::string& target);

}  // namespace stoker::tools

// StagedFile: an output's new contents, complete and fsync'ed in a
// temporary file beside its target (tools/cli/temporary_files.hpp names
// it), not yet in the target's place. OutputBatch
// (tools/cli/output_batch.hpp) is the one that makes and commits them.
//
// - commit() renames the temporary over the target: a reader sees the old
//   file or the new one, never half of one.
// - A StagedFile destroyed before a successful commit() removes its
//   temporary, so the target keeps what it held and nothing is left
//   beside it; while one lives, a fatal signal removes it too.
//
// Move-only; not thread-safe per object.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "tools/cli/temporary_files.hpp"

namespace stoker::tools::detail {

// The directory that holds `file` ("." for a bare name).
std::string directory_of(const std::string& file);

class StagedFile {
 public:
  // Writes the new contents to `fd`, the temporary's open descriptor, or
  // to the file at `temporary` (for a writer that opens its own).
  using Fill = std::function<Error(int fd, const std::string& temporary)>;

  // Makes a temporary in `target`'s directory, fills it, gives it the mode
  // the target has (0666 less the umask for a new file) and fsyncs it.
  // `path`, the output as the user named it, names it in errors.
  static Result<StagedFile> make(std::string path, std::string target, const Fill& fill);

  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&& other) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();

  // Renames the temporary over the target; the error names the path.
  Error commit();

  const std::string& path() const { return path_; }
  const std::string& target() const { return target_; }

 private:
  StagedFile(std::string path, std::string target, std::string temporary,
             std::unique_ptr<TemporaryFile> guard);
  void discard() noexcept;

  std::string path_, target_, temporary_;  // temporary_ empty once committed or discarded
  std::unique_ptr<TemporaryFile> guard_;
};

}  // namespace stoker::tools::detail

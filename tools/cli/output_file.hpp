// OutputFile: every file the stoker binary writes (--out, --trace, JSON
// reports, SRS files) goes through it, so that all of them behave alike:
//
// - The path is checked when the command starts, before its work: an
//   existing path that is not a regular file once links are followed (a
//   FIFO, a character or block device, a socket, a directory; /dev/stdout
//   when it is a pipe or a terminal) is refused with an error that says
//   which it is, and left alone; a missing
//   directory or one without write permission is named with the reason.
// - write() replaces the contents atomically: the bytes go to a temporary
//   file in the target's own directory, are fsync'ed, and the temporary is
//   renamed over the target. A reader sees the old file or the new one,
//   never half of one, and a failed write leaves the old file as it was.
//   A command with several outputs writes them through an OutputBatch
//   (output_batch.hpp): all of them or, on a failure, none.
// - A symlink is written through: the file it points to is replaced, the
//   link stays a link. A new file gets 0666 less the umask, a replaced one
//   keeps its permission bits.
// - Nothing is created before write(): a command that ends early leaves
//   the path as it found it. A signal that ends the process mid-write
//   removes the temporary file; one left by a process killed outright
//   (SIGKILL) is removed by the next write to that path
//   (tools/cli/temporary_files.hpp).
// - not_input() refuses an output that is one of the command's inputs (the
//   same file, through a symlink or a hard link too), so that a result
//   never replaces what it was computed from.
//
// Usage in a command (see tools/cli/command_line.hpp for the parser):
//
//   std::string out_path;
//   cl.value("--out", out_path, "FILE", "where the result goes");
//   if (auto rc = cl.parse(argc, argv)) return *rc;
//   auto out = OutputFile::check(out_path);
//   if (!out) return cl.usage_error(out.error().what());   // exit 2, before the work
//   ... the work ...
//   if (auto e = out->write(bytes)) return cl.failure(e.what());   // exit 1
//
// Not thread-safe per object; distinct objects may write at once.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace stoker::tools {

class OutputFile {
 public:
  // Resolves `path` (following symlinks, up to 40) and checks that it can be
  // written. Errors name the path and say what is wrong
  // ("/tmp/p: is a FIFO, not a regular file; refusing to replace it").
  static Result<OutputFile> check(std::string path);

  // Replaces the file's contents with `bytes`; the error names the path and
  // the reason (strerror).
  Error write(std::string_view bytes) const;
  // The same with what `fill` writes to a stream (kept in memory first: for
  // reports and traces, not for gigabytes).
  Error write(const std::function<void(std::ostream&)>& fill) const;

  // An error when the file a write would replace is `input` (same device
  // and inode), naming both options: "--out P is the same file as --points
  // P; refusing to replace an input".
  Error not_input(std::string_view out_option, std::string_view in_option,
                  const std::string& input) const;

  // The path as given, and the file a write replaces (links followed).
  const std::string& path() const { return path_; }
  const std::string& target() const { return target_; }

 private:
  OutputFile(std::string path, std::string target)
      : path_(std::move(path)), target_(std::move(target)) {}
  std::string path_, target_;
};

// A command's outputs by option ("--proof", PATH), each checked as check()
// does and none of them one of `inputs` (option, path) or another of them
// ("--proof P and --public ./P name the same file"), however the two are
// spelled: through links, ".", "..", a hard link, for files that exist and
// ones that do not yet. What a command with several outputs calls before
// its work; it writes them with an OutputBatch (output_batch.hpp), all or
// none. Outputs with an empty path are left out.
using NamedOutputs = std::vector<std::pair<std::string, OutputFile>>;
Result<NamedOutputs> check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                   const std::vector<std::pair<std::string, std::string>>& inputs);
// The output of `option`, or nullptr when it was left out.
const OutputFile* output(const NamedOutputs& outputs, std::string_view option);

// What kind of file `mode` (st_mode) is, for messages: "a FIFO", "a
// directory", "a character device", ...
const char* file_kind(unsigned mode);

}  // namespace stoker::tools

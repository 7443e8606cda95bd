// OutputBatch: a command's outputs written all or none, each as OutputFile
// (tools/cli/output_file.hpp) writes one: through links, in a temporary
// beside its target, fsync'ed, renamed over it.
//
// - add() checks the output's path again and writes its new contents to a
//   temporary (detail/staged_file.hpp); no target changes.
// - commit() checks every path again, then renames every temporary over
//   its target. Until then each output holds what it held before.
// - A failed add() or commit(), or a batch destroyed before commit(),
//   removes every temporary it made: nothing is left beside the targets,
//   and none of them changed. So a command that adds each output and
//   returns on the first error leaves all of its outputs as they were.
// - The renames are the one step that cannot be undone: once the first
//   has replaced its target, a later one that fails (its directory made
//   read-only meanwhile) leaves the earlier outputs new; the error names
//   the output that failed.
//
// Usage, outputs from check_outputs():
//
//   OutputBatch batch;
//   if (Error e = batch.add(*output(outs, "--proof"), proof_json)) return cl.failure(e.what());
//   if (Error e = batch.add(*output(outs, "--key"),
//                           [&](const std::string& tmp) { return write_key(tmp, key); }))
//     return cl.failure(e.what());
//   if (Error e = batch.commit()) return cl.failure(e.what());
//
// Not thread-safe. At most kMaxTemporaries (temporary_files.hpp) of the
// process's temporaries are guarded against signals at once.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "tools/cli/detail/staged_file.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {

class OutputBatch {
 public:
  // `file`'s new contents: `bytes`.
  Error add(const OutputFile& file, std::string_view bytes);
  // `file`'s new contents: what `write_to` writes to the file at the path
  // it is given (a temporary), for writers that take a path and stream
  // gigabytes. An error it returns is reported with the output's path in
  // place of the temporary's.
  Error add(const OutputFile& file, const std::function<Error(const std::string& path)>& write_to);

  // Renames every output's temporary over its target, in the order added.
  Error commit();

 private:
  Error stage(const OutputFile& file, const detail::StagedFile::Fill& fill);
  std::vector<detail::StagedFile> staged_;
};

}  // namespace stoker::tools

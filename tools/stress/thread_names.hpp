// The names of this process's threads, as the kernel keeps them in
// /proc/self/task/<tid>/comm (at most 15 characters: what the thread set
// with pthread_setname_np, or its creator's name), and the names a later
// listing holds beyond an earlier one. A round names with them the threads
// its engine left behind, so that a violation says whose threads they are
// (a library's, the engine's) rather than only how many.
//
// Thread safety: both functions may be called from any thread. A listing is
// a snapshot: threads that start or end while it is read may be missing.
// Failure: an unreadable /proc gives an empty listing, never an error.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace stoker::tools::stress {

// Sorted, one entry per thread (names repeat when threads share one).
inline std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::ifstream comm(it->path() / "comm");
    std::string name;
    // A thread that ended after the directory was read has no comm left.
    if (std::getline(comm, name)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The multiset difference after - before, sorted: a name appears as many
// times as `after` holds it more often than `before`, so a second thread
// with a name the baseline already had is still reported.
inline std::vector<std::string> threads_added(std::vector<std::string> before,
                                              std::vector<std::string> after) {
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  return added;
}

}  // namespace stoker::tools::stress

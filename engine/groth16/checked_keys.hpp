// CheckedKeys: a record of the key files whose every point passed the curve
// and subgroup checks, by content digest (key_digest.hpp), so that a key
// checked once loads afterwards with its points trusted.
//
// Checking a key's points is the largest part of loading it: a 2^26 key
// (30.2 GB) reaches an H100 in 2.9 s trusted and 12.3 s checked, bound by
// the checks' field products. Its digest takes about 2 s on 16 threads.
// A record holds digests, not paths: a file that is copied keeps its
// entry, one that is changed loses it.
//
// The record is a text file, one line per key: "v1 <SHA-256 hex> <bytes>".
// "v1" names what was checked (on the curve and in the prime-order group,
// by engine/groth16/point_check and kernels' point checks as they are
// now); a change to those checks takes a new tag, and the old lines stop
// counting. Whoever can write the record can make a bad key load
// unchecked, so a record not owned by this user, or writable by its group
// or others, is refused, as is a link in its place; its directory is made
// mode 0700 and the file 0600.
//
// Thread and process safety: lookups take a shared lock on the file, and
// additions an exclusive one and append one line (flock), so several
// processes may share a record (the CLI's and a daemon's).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "engine/groth16/key_digest.hpp"

namespace stoker::engine::groth16 {

class CheckedKeys {
 public:
  explicit CheckedKeys(std::filesystem::path file) : file_(std::move(file)) {}

  // The user's record: $STOKER_CACHE_DIR/checked-keys, else
  // $XDG_CACHE_HOME/stoker/checked-keys, else
  // $HOME/.cache/stoker/checked-keys; none when none of them is set.
  static std::optional<std::filesystem::path> user_file();

  const std::filesystem::path& file() const noexcept { return file_; }

  // Whether the record holds `d` (false when the record does not exist).
  // An error names a record that cannot be read or may not be trusted.
  Result<bool> contains(const KeyDigest& d) const;

  // Whether the record may hold a file of `file_bytes` bytes: false when no
  // line of it names that size (nor any line at all, the record not
  // existing). No digest is needed: a load told false knows the file's
  // points will be checked, and can take the digest beside the check
  // rather than before it. Errors: as contains.
  Result<bool> may_hold(std::uint64_t file_bytes) const;

  // Adds `d` (once: an entry already there is left alone), creating the
  // record and its directory when they do not exist, and syncs the file.
  Error add(const KeyDigest& d) const;

  // A key file's digest, taken through `fd` on `threads` threads (0: the
  // hardware's), and whether the record holds it (never with `recheck`).
  // A record that cannot be read or trusted is no reason to fail a load:
  // `note` says what is wrong with it, and `recorded` stays false, so the
  // points are checked. Errors are the digest's reads'.
  struct Lookup {
    KeyDigest digest;
    double digest_s = 0;
    bool recorded = false;
    std::string note;
  };
  Result<Lookup> look_up(int fd, const std::string& label, bool recheck,
                         unsigned threads = 0) const;

 private:
  std::filesystem::path file_;
};

}  // namespace stoker::engine::groth16

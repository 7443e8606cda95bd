// A proving key file's content digest and its identity on disk, so that a
// file whose points were checked once need not be checked again
// (checked_keys.hpp).
//
// The digest is SHA-256 over the file in fixed 64 MiB pieces, each piece
// hashed on its own so that threads share the pass, then SHA-256 over a
// tag, the file's size and the pieces' digests in order. It does not depend
// on the thread count. One pass reads the file once: a 2^26 key of 30 GB
// takes about 2 s on a host of 16 threads (SHA-NI), where checking its
// points takes 12.3 s on an H100.
//
// The identity (device, inode, size, modification and change times) is
// what a load compares after reading the points: a write to the file
// between the digest and the end of the load changes the change time,
// which only the kernel sets, so the load then knows its bytes may not be
// the digested ones.
//
// Thread safety: free functions; a digest runs its own threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/error.hpp"

namespace stoker::engine::groth16 {

struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t modified_ns = 0, changed_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

// The identity of an open file; errors name `label`.
Result<FileIdentity> identity_of(int fd, const std::string& label);

struct KeyDigest {
  std::array<std::uint8_t, 32> sha256{};
  std::uint64_t file_bytes = 0;
  // The file's identity when the digest began (and, checked, when it ended).
  FileIdentity identity;
  // 64 lowercase hex digits.
  std::string hex() const;
};

// The digest of the whole open file `fd` (read with pread: the file's
// offset is left alone), on `threads` threads (0: the hardware's). Errors
// name `label`: a read that fails or comes up short, or a file whose
// identity changed while it was read.
Result<KeyDigest> digest_key_file(int fd, const std::string& label, unsigned threads = 0);

}  // namespace stoker::engine::groth16

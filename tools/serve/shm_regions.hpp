// ShmRegions: POSIX shared-memory objects that clients registered with the
// daemon (POST /v1/shm, after Triton's system shared-memory extension), so
// that a proof's witness can be handed over by writing it into shared
// memory instead of into a file or the request body.
//
// Registering opens the object read-only and checks that it belongs to the
// caller (the uid the Unix socket's SO_PEERCRED gives: a client cannot make
// the daemon read another user's memory) and that it holds at least the
// bytes claimed. The daemon keeps the descriptor, so the region stays
// readable while proofs use it even if the client unlinks the name; a
// region in use cannot be unregistered (409). Witnesses are read from it in
// place (engine/groth16/file_window.hpp), converted by the CPU into the
// form the producers need, so nothing DMAs from the region and it is not
// page-locked.
//
// Not thread safe: the daemon's executor owns it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "engine/groth16/file_window.hpp"
#include "tools/serve/refusal.hpp"

namespace stoker::serve {

class ShmRegions {
 public:
  ShmRegions() = default;
  ~ShmRegions();
  ShmRegions(const ShmRegions&) = delete;
  ShmRegions& operator=(const ShmRegions&) = delete;

  struct Region {
    std::string name;
    int fd = -1;
    std::uint64_t bytes = 0;  // registered; the object holds at least these
    uid_t owner = 0;
    std::size_t users = 0;    // proofs reading it now
  };

  // Errors: a name that is not "/NAME" (403 over TCP, where no uid is
  // known), no such object (404), another user's object (403), fewer bytes
  // than `bytes` (400), a name registered already (409).
  Answer<const Region*> add(const std::string& name, std::uint64_t bytes,
                            const std::optional<uid_t>& caller);
  // Errors: unknown (404), registered by another user (403), in use (409).
  Answer<bool> remove(const std::string& name, const std::optional<uid_t>& caller);

  // A region of `name` for a witness: [offset, offset + bytes) must lie in
  // what was registered (400 otherwise), by its owner; counts a user until
  // release().
  Answer<engine::groth16::FileWindow> acquire(const std::string& name, std::uint64_t offset,
                                              std::uint64_t bytes,
                                              const std::optional<uid_t>& caller);
  void release(const std::string& name);

  const std::map<std::string, Region>& regions() const noexcept { return regions_; }

 private:
  std::map<std::string, Region> regions_;
};

}  // namespace stoker::serve

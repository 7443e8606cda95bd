// ShmRegions; see shm_regions.hpp.
#include "tools/serve/shm_regions.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace stoker::serve {
namespace {

std::string errno_text(int e) { return std::generic_category().message(e); }

Refusal only_over_unix() {
  return {403, "shared memory is only for clients on the daemon's Unix socket, whose user it "
               "can tell"};
}

bool valid_name(const std::string& name) {
  if (name.size() < 2 || name.size() > 255 || name[0] != '/') return false;
  return name.find('/', 1) == std::string::npos;
}

}  // namespace

ShmRegions::~ShmRegions() {
  for (auto& [name, r] : regions_) ::close(r.fd);
}

Answer<const ShmRegions::Region*> ShmRegions::add(const std::string& name, std::uint64_t bytes,
                                                   const std::optional<uid_t>& caller) {
  if (!caller) return only_over_unix();
  if (!valid_name(name))
    return Refusal{400, "shared-memory name '" + name +
                            "' is not '/NAME' (one leading slash, no other, at most 255 bytes)"};
  if (bytes == 0) return Refusal{400, "shared-memory region " + name + " of 0 bytes holds no witness"};
  if (regions_.count(name))
    return Refusal{409, "shared-memory region " + name + " is registered already"};
  const int fd = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return Refusal{404, "no shared-memory object " + name};
    if (e == EACCES) return Refusal{403, "shared-memory object " + name + ": the daemon may not read it"};
    return Refusal{400, "shared-memory object " + name + ": " + errno_text(e)};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Refusal{400, "shared-memory object " + name + ": " + errno_text(e)};
  }
  if (st.st_uid != *caller) {
    ::close(fd);
    return Refusal{403, "shared-memory object " + name + " belongs to uid " +
                            std::to_string(st.st_uid) + ", not to the caller (uid " +
                            std::to_string(*caller) + ")"};
  }
  if (static_cast<std::uint64_t>(st.st_size) < bytes) {
    ::close(fd);
    return Refusal{400, "shared-memory object " + name + " holds " + std::to_string(st.st_size) +
                            " bytes, fewer than the " + std::to_string(bytes) + " registered"};
  }
  auto [it, added] = regions_.emplace(name, Region{name, fd, bytes, st.st_uid, 0});
  return &it->second;
}

Answer<bool> ShmRegions::remove(const std::string& name, const std::optional<uid_t>& caller) {
  if (!caller) return only_over_unix();
  const auto it = regions_.find(name);
  if (it == regions_.end()) return Refusal{404, "no registered shared-memory region " + name};
  if (it->second.owner != *caller)
    return Refusal{403, "shared-memory region " + name + " was registered by uid " +
                            std::to_string(it->second.owner)};
  if (it->second.users != 0)
    return Refusal{409, "shared-memory region " + name + " is being read by " +
                            std::to_string(it->second.users) + " proofs"};
  ::close(it->second.fd);
  regions_.erase(it);
  return true;
}

Answer<engine::groth16::FileWindow> ShmRegions::acquire(const std::string& name,
                                                        std::uint64_t offset, std::uint64_t bytes,
                                                        const std::optional<uid_t>& caller) {
  if (!caller) return only_over_unix();
  const auto it = regions_.find(name);
  if (it == regions_.end())
    return Refusal{404, "no registered shared-memory region " + name + " (POST /v1/shm first)"};
  Region& r = it->second;
  if (r.owner != *caller)
    return Refusal{403, "shared-memory region " + name + " belongs to uid " +
                            std::to_string(r.owner) + ", not to the caller"};
  if (bytes == 0) return Refusal{400, "shared-memory witness of 0 bytes"};
  if (offset > r.bytes || bytes > r.bytes - offset)
    return Refusal{400, "shared-memory witness at bytes " + std::to_string(offset) + ".." +
                            std::to_string(offset + bytes) + " runs past region " + name + "'s " +
                            std::to_string(r.bytes) + " bytes"};
  ++r.users;
  return engine::groth16::FileWindow{r.fd, "shm:" + name + " bytes " + std::to_string(offset) +
                                               ".." + std::to_string(offset + bytes),
                                     offset, bytes};
}

void ShmRegions::release(const std::string& name) {
  const auto it = regions_.find(name);
  if (it != regions_.end() && it->second.users > 0) --it->second.users;
}

}  // namespace stoker::serve

// os_random(out): `out` filled from the operating system's CSPRNG
// (getrandom(2)), for whatever must be unpredictable: a proof's blinding
// scalars, the daemon's ids, the coins of the CPU's batched group test.
// getrandom blocks only until the pool is first initialised, returns short
// for large requests and may be interrupted by a signal; those are retried
// here, and any other failure is returned (errno's code), never papered
// over with weaker bytes.
//
// Thread safety: any thread, any number at once.
#pragma once

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <span>
#include <system_error>

namespace stoker::common {

inline std::error_code os_random(std::span<std::byte> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return std::error_code(n < 0 ? errno : EIO, std::generic_category());
    }
  }
  return {};
}

}  // namespace stoker::common

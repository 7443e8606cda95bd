#include "engine/groth16/proof_randomness.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace stoker::engine::groth16 {
namespace {

// Rejection sampling over 255-bit draws: r > 2^254, so a draw is kept with
// probability above 0.9 and the kept values are uniform, with no modular
// bias.
Result<kernels::Fr> random_fr() {
  for (;;) {
    std::uint64_t v[4];
    auto* bytes = reinterpret_cast<unsigned char*>(v);
    std::size_t got = 0;
    while (got < sizeof v) {
      const ssize_t k = ::getrandom(bytes + got, sizeof v - got, 0);
      if (k < 0) {
        if (errno == EINTR) continue;
        return Error{
            std::error_code(errno, std::generic_category()),
            std::string("getrandom for a proof's blinding scalars: ") + std::strerror(errno)};
      }
      got += static_cast<std::size_t>(k);
    }
    v[3] &= 0x7fffffffffffffffull;
    if (kernels::Fr::is_canonical(v)) return kernels::Fr::from_canonical(v);
  }
}

}  // namespace

Result<ProofRandomness> ProofRandomness::from_os() {
  auto r = random_fr();
  if (!r) return r.error();
  auto s = random_fr();
  if (!s) return s.error();
  return ProofRandomness{*r, *s};
}

}  // namespace stoker::engine::groth16

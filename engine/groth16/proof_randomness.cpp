#include "engine/groth16/proof_randomness.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <system_error>

#include "common/os_random.hpp"

namespace stoker::engine::groth16 {
namespace {

// Rejection sampling over 255-bit draws: r > 2^254, so a draw is kept with
// probability above 0.9 and the kept values are uniform, with no modular
// bias.
Result<kernels::Fr> random_fr() {
  for (;;) {
    std::uint64_t v[4];
    if (const std::error_code ec = common::os_random(std::as_writable_bytes(std::span(v))))
      return Error{ec, "getrandom for a proof's blinding scalars: " + ec.message()};
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

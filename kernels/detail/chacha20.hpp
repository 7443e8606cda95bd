// The ChaCha20 block function (RFC 8439, section 2.3), on the CPU and the
// GPU alike: 64 bytes of key stream from a 256-bit key, a 32-bit block
// counter and a 96-bit nonce. The GPU's batched group check
// (point_check_batch_gpu.cu) draws each point's coins from it, keyed by
// bytes of the OS CSPRNG: every thread makes the coins of its own points,
// and no gigabytes of random bytes cross the link. Its output is the RFC's
// state words, little-endian, as openssl's chacha20 streams them.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace stoker::kernels::gpu::detail {

struct ChaChaKey {
  std::uint32_t words[8];  // the key's bytes read as little-endian words
};

STOKER_HD std::uint32_t chacha_rotl(std::uint32_t v, int s) {
  return (v << s) | (v >> (32 - s));
}

STOKER_HD void chacha_quarter(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c,
                              std::uint32_t& d) {
  a += b;
  d = chacha_rotl(d ^ a, 16);
  c += d;
  b = chacha_rotl(b ^ c, 12);
  a += b;
  d = chacha_rotl(d ^ a, 8);
  c += d;
  b = chacha_rotl(b ^ c, 7);
}

// out[0..15]: block `counter` of the stream of (key, nonce).
STOKER_HD void chacha20_block(const ChaChaKey& key, std::uint32_t counter,
                              const std::uint32_t nonce[3], std::uint32_t out[16]) {
  std::uint32_t s[16] = {0x61707865u,  0x3320646eu,  0x79622d32u,  0x6b206574u,
                         key.words[0], key.words[1], key.words[2], key.words[3],
                         key.words[4], key.words[5], key.words[6], key.words[7],
                         counter,      nonce[0],     nonce[1],     nonce[2]};
  std::uint32_t x[16];
  STOKER_UNROLL
  for (int i = 0; i < 16; ++i) x[i] = s[i];
  STOKER_UNROLL
  for (int round = 0; round < 10; ++round) {
    chacha_quarter(x[0], x[4], x[8], x[12]);
    chacha_quarter(x[1], x[5], x[9], x[13]);
    chacha_quarter(x[2], x[6], x[10], x[14]);
    chacha_quarter(x[3], x[7], x[11], x[15]);
    chacha_quarter(x[0], x[5], x[10], x[15]);
    chacha_quarter(x[1], x[6], x[11], x[12]);
    chacha_quarter(x[2], x[7], x[8], x[13]);
    chacha_quarter(x[3], x[4], x[9], x[14]);
  }
  STOKER_UNROLL
  for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

}  // namespace stoker::kernels::gpu::detail

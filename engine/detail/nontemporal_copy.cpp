#include "engine/detail/nontemporal_copy.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_NONTEMPORAL_LANES 1
#include <immintrin.h>
#endif

namespace stoker::engine::detail {

#if defined(STOKER_NONTEMPORAL_LANES)
namespace {

// How far ahead of the copy the source is prefetched: far enough to cover
// a loaded memory latency (~1 us) at several GB/s per thread, and across
// page boundaries, which the hardware prefetchers do not cross.
constexpr std::size_t kAhead = std::size_t{16} << 10;
constexpr std::size_t kStep = 256;  // four 64-byte lines per iteration

__attribute__((target("avx512f"))) void copy_lanes(std::byte* dst, const std::byte* src,
                                                   std::size_t bytes) noexcept {
  for (std::size_t p = 0; p < kAhead && p < bytes; p += 64)
    _mm_prefetch(reinterpret_cast<const char*>(src + p), _MM_HINT_T0);
  std::size_t i = 0;
  for (; i + kStep <= bytes; i += kStep) {
    if (i + kAhead + kStep <= bytes)
      for (std::size_t l = 0; l < kStep; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(src + i + kAhead + l), _MM_HINT_T0);
    const __m512i a = _mm512_loadu_si512(src + i);
    const __m512i b = _mm512_loadu_si512(src + i + 64);
    const __m512i c = _mm512_loadu_si512(src + i + 128);
    const __m512i d = _mm512_loadu_si512(src + i + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
  }
  // Non-temporal stores are weakly ordered: fenced before whoever reads the
  // bytes next, the DMA engine this thread starts for a staging chunk, or
  // the thread that hands a bounce copy's destination back to the job.
  _mm_sfence();
  std::memcpy(dst + i, src + i, bytes - i);
}

bool lanes_wanted() noexcept {
  static const bool wanted = [] {
    const char* v = std::getenv("STOKER_STAGING_COPY");
    if (v != nullptr && std::string_view(v) == "memcpy") return false;
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return wanted;
}

}  // namespace
#endif

bool nontemporal_copy_streams() noexcept {
#if defined(STOKER_NONTEMPORAL_LANES)
  return lanes_wanted();
#else
  return false;
#endif
}

void nontemporal_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
#if defined(STOKER_NONTEMPORAL_LANES)
  // Up to the destination's next line by memcpy, the rest in lanes: a
  // caller's heap buffer starts 16 bytes into its page (glibc), and
  // non-temporal stores need whole aligned lines.
  const std::size_t head = (64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64;
  if (lanes_wanted() && bytes >= head + kStep) {
    std::memcpy(dst, src, head);
    return copy_lanes(dst + head, src + head, bytes - head);
  }
#endif
  std::memcpy(dst, src, bytes);
}

}  // namespace stoker::engine::detail

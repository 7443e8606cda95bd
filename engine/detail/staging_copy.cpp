#include "engine/detail/staging_copy.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_STAGING_LANES 1
#include <immintrin.h>
#endif

namespace stoker::engine::detail {

#if defined(STOKER_STAGING_LANES)
namespace {

// How far ahead of the copy the source is prefetched: far enough to cover
// a loaded memory latency (~1 us) at several GB/s per thread, and across
// page boundaries, which the hardware prefetchers do not cross.
constexpr std::size_t kAhead = std::size_t{16} << 10;
constexpr std::size_t kStep = 256;  // four 64-byte lines per iteration

// Stream: non-temporal stores, the chunk goes to memory and DMA reads it
// from there. Otherwise ordinary stores: a chunk small enough to stay in the
// last-level cache until its DMA can be read from there (inbound reads snoop
// the caches), and the ring's buffers, reused, need not reach memory at all.
template <bool Stream>
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
    if constexpr (Stream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
    } else {
      _mm512_store_si512(reinterpret_cast<__m512i*>(dst + i), a);
      _mm512_store_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
      _mm512_store_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
      _mm512_store_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
    }
  }
  // Streaming stores are weakly ordered: fence them before the caller
  // publishes the chunk to the thread that sends it.
  _mm_sfence();
  std::memcpy(dst + i, src + i, bytes - i);
}

enum class Mode { memcpy, stream, cached };

Mode mode() noexcept {
  static const Mode m = [] {
    if (__builtin_cpu_supports("avx512f") == 0) return Mode::memcpy;
    const char* v = std::getenv("STOKER_STAGING_COPY");
    const std::string_view s = v != nullptr ? v : "";
    if (s == "memcpy") return Mode::memcpy;
    if (s == "cached") return Mode::cached;
    return Mode::stream;
  }();
  return m;
}

}  // namespace
#endif

bool staging_copy_prefetches() noexcept {
#if defined(STOKER_STAGING_LANES)
  return mode() != Mode::memcpy;
#else
  return false;
#endif
}

void staging_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
#if defined(STOKER_STAGING_LANES)
  const Mode m = mode();
  if (m != Mode::memcpy && reinterpret_cast<std::uintptr_t>(dst) % 64 == 0 && bytes >= kStep)
    return m == Mode::stream ? copy_lanes<true>(dst, src, bytes)
                             : copy_lanes<false>(dst, src, bytes);
#endif
  std::memcpy(dst, src, bytes);
}

}  // namespace stoker::engine::detail

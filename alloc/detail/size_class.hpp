// Size classes of PinnedPool: 2^k * {1, 1.25, 1.5, 1.75} from 4 KiB up, so a
// block wastes at most 20 % of its capacity and every block is 1 KiB
// aligned inside its 4 KiB-aligned slab.
#pragma once

#include <bit>
#include <cstddef>

namespace stoker::alloc::detail {

inline constexpr unsigned kMinClassShift = 12;  // 4 KiB
inline constexpr unsigned kMaxClassShift = 46;  // 64 TiB: far beyond any host
inline constexpr unsigned kClassCount = (kMaxClassShift - kMinClassShift) * 4 + 1;
inline constexpr std::size_t kMaxClassBytes = std::size_t{1} << kMaxClassShift;

constexpr std::size_t class_bytes(unsigned c) noexcept {
  const unsigned k = kMinClassShift + c / 4;
  return (std::size_t{1} << k) + (c % 4) * (std::size_t{1} << (k - 2));
}

// The smallest class that holds `bytes` (0 < bytes <= kMaxClassBytes).
constexpr unsigned size_class(std::size_t bytes) noexcept {
  if (bytes <= (std::size_t{1} << kMinClassShift)) return 0;
  const unsigned k = static_cast<unsigned>(std::bit_width(bytes) - 1);
  const std::size_t base = std::size_t{1} << k;
  const std::size_t step = base >> 2;
  const std::size_t q = (bytes - base + step - 1) / step;  // 0..4
  return (k - kMinClassShift) * 4 + static_cast<unsigned>(q);
}

static_assert(class_bytes(size_class(4096)) == 4096);
static_assert(class_bytes(size_class(4097)) == 5120);
static_assert(class_bytes(size_class(8191)) == 8192);
static_assert(class_bytes(size_class(std::size_t{1} << 30)) == std::size_t{1} << 30);
static_assert(class_bytes(size_class((std::size_t{1} << 30) + 1)) == std::size_t{5} << 28);
static_assert(class_bytes(kClassCount - 1) == kMaxClassBytes);

}  // namespace stoker::alloc::detail

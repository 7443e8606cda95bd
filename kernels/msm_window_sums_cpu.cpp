// cpu::finish_window_sums (msm.hpp): the host's end of an MSM whose GPU
// part left its windows' sums.
#include <cstring>
#include <type_traits>

#include "common/error.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {
namespace {

template <typename Xyzz>
std::error_code finish(const void* sums, std::size_t bytes, Xyzz& out) {
  constexpr MsmGroup group = std::is_same_v<Xyzz, G2Xyzz> ? MsmGroup::g2 : MsmGroup::g1;
  gpu::MsmWindowSumsHeader h{};
  if (!sums || bytes < sizeof h) return make_error_code(Errc::invalid_argument);
  std::memcpy(&h, sums, sizeof h);
  if (h.group != static_cast<std::uint32_t>(group) || h.windows > gpu::kMsmMaxWindows ||
      (h.windows > 0 && (h.window_bits < 1 || h.window_bits > 26)) ||
      bytes < gpu::window_sums_bytes(group, h.windows))
    return make_error_code(Errc::invalid_argument);
  const auto* at = static_cast<const unsigned char*>(sums) + sizeof h;
  auto load = [at](std::size_t i) {
    Xyzz x;
    std::memcpy(&x, at + i * sizeof(Xyzz), sizeof x);
    return x;
  };
  // Horner over the windows, in the order of the GPU's combine_windows_kernel.
  Xyzz acc = Xyzz::infinity();
  for (unsigned w = h.windows; w-- > 0;) {
    if (w + 1 < h.windows)
      for (unsigned d = 0; d < h.window_bits; ++d) acc = dbl(acc);
    add(acc, load(w));
    add(acc, load(h.windows + w));
  }
  add(acc, load(2 * std::size_t{h.windows}));
  out = acc;
  return {};
}

}  // namespace

std::error_code finish_window_sums(const void* sums, std::size_t bytes, G1Xyzz& out) {
  return finish(sums, bytes, out);
}

std::error_code finish_window_sums(const void* sums, std::size_t bytes, G2Xyzz& out) {
  return finish(sums, bytes, out);
}

}  // namespace stoker::kernels::cpu

#include "engine/srs.hpp"

#include <algorithm>
#include <vector>

#include "engine/detail/srs_residency.hpp"
#include "kernels/detail/parallel.hpp"

namespace stoker::engine {

namespace {
const std::string kNone;
const SrsLoadTimes kNoTimes;
}  // namespace

SrsFill gather_segments(std::span<const std::span<const kernels::G1Affine>> segments) {
  std::vector<std::span<const kernels::G1Affine>> parts(segments.begin(), segments.end());
  std::vector<std::size_t> starts;  // each segment's first slot
  std::size_t slots = 0;
  for (const auto& s : parts) {
    starts.push_back(slots);
    slots += s.size();
  }
  return [parts = std::move(parts), starts = std::move(starts)](
             std::size_t first, std::span<kernels::G1Affine> out) -> Error {
    const auto gather = [&](std::size_t from, std::span<kernels::G1Affine> to) {
      // The segment holding `from`: the last that starts at or before it.
      std::size_t k = static_cast<std::size_t>(
          std::upper_bound(starts.begin(), starts.end(), from) - starts.begin() - 1);
      for (std::size_t done = 0; done < to.size(); ++k) {
        const std::size_t at = from + done - starts[k];
        if (at >= parts[k].size()) continue;  // an empty segment
        const std::size_t n = std::min(parts[k].size() - at, to.size() - done);
        std::copy_n(parts[k].begin() + static_cast<std::ptrdiff_t>(at), n,
                    to.begin() + static_cast<std::ptrdiff_t>(done));
        done += n;
      }
    };
    kernels::detail::parallel_for(
        out.size(), 0,
        [&](std::size_t b, std::size_t e) { gather(first + b, out.subspan(b, e - b)); },
        std::size_t{1} << 16);
    return Error{};
  };
}

std::size_t Srs::points() const noexcept {
  return state_ ? state_->points : 0;
}
const std::string& Srs::label() const noexcept {
  return state_ ? state_->label : kNone;
}
const SrsLoadTimes& Srs::load_times() const noexcept {
  return state_ ? state_->times : kNoTimes;
}
bool Srs::evicting() const noexcept {
  return state_ && state_->evicting.load(std::memory_order_acquire);
}
bool Srs::released() const noexcept {
  return state_ && state_->released.load(std::memory_order_acquire);
}
const kernels::G1Affine* Srs::points_on(const devices::Device& device) const noexcept {
  if (!state_ || state_->released.load(std::memory_order_acquire)) return nullptr;
  for (std::size_t d = 0; d < state_->devices.size(); ++d)
    if (state_->devices[d] == &device) return state_->buffers[d].as<const kernels::G1Affine>();
  return nullptr;
}

}  // namespace stoker::engine

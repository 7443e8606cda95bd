#include "engine/srs.hpp"

#include "engine/detail/srs_residency.hpp"

namespace stoker::engine {

namespace {
const std::string kNone;
const SrsLoadTimes kNoTimes;
}  // namespace

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

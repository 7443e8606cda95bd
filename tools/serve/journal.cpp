#include "tools/serve/journal.hpp"

#include <array>
#include <utility>

namespace stoker::serve {
namespace {

// One table per enum, indexed by the enumerator's value, so that the words
// and their parsing cannot drift apart.
constexpr std::array<std::string_view, 5> kStateNames = {"queued", "running", "done", "failed",
                                                         "cancelled"};
constexpr std::array<std::string_view, 4> kPriorityNames = {"low", "normal", "high", "critical"};

}  // namespace

std::string_view to_string(ProofState state) noexcept {
  const auto i = static_cast<std::size_t>(state);
  return i < kStateNames.size() ? kStateNames[i] : std::string_view("unknown");
}

std::optional<ProofState> proof_state_from(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kStateNames.size(); ++i)
    if (kStateNames[i] == text) return static_cast<ProofState>(i);
  return std::nullopt;
}

std::string_view to_string(Priority priority) noexcept {
  const auto i = static_cast<std::size_t>(priority);
  return i < kPriorityNames.size() ? kPriorityNames[i] : std::string_view("unknown");
}

std::optional<Priority> priority_from(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kPriorityNames.size(); ++i)
    if (kPriorityNames[i] == text) return static_cast<Priority>(i);
  return std::nullopt;
}

}  // namespace stoker::serve

// Refusal and Answer: what a daemon operation returns, a value or the
// reason it was refused with the HTTP status that reason maps to (400 bad
// request, 403 not allowed, 404 unknown, 409 conflict, 503 draining, 507
// does not fit).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace stoker::serve {

struct Refusal {
  unsigned status = 400;
  std::string message;
};

template <typename T>
struct Answer {
  std::optional<T> value;
  Refusal refusal;
  Answer(T v) : value(std::move(v)) {}
  Answer(Refusal r) : refusal(std::move(r)) {}
  explicit operator bool() const noexcept { return value.has_value(); }
};

}  // namespace stoker::serve

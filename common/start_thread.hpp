// start_thread(thread, what, f): a std::thread running f(), or an Error that
// says which thread the system would not start and why: "could not start
// <what>: Resource temporarily unavailable", `what` naming the thread and
// its role ("thread stoker-feed-0 (the feeder of device 0)").
//
// The system refuses a thread when it has no memory for the thread's stack
// (an address-space limit), or the process or user is at its thread limit.
// std::thread then throws std::system_error (std::bad_alloc where its own
// state cannot be allocated); thrown from a constructor or a pool's set-up
// that is an exception nobody expects, and from a thread a call to
// std::terminate. Every thread the engine and the devices start comes
// through here, so a refusal is an error the caller returns in words, and
// the caller ends the threads it already started.
//
// Thread safety: as std::thread's constructor. `thread` must not be
// joinable; on an error it is left as it was.
#pragma once

#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "common/error.hpp"

namespace stoker::common {

template <typename F>
Error start_thread(std::thread& thread, const std::string& what, F&& f) {
  std::error_code why;
  try {
    thread = std::thread(std::forward<F>(f));
    return {};
  } catch (const std::system_error& e) {
    why = e.code();
  } catch (const std::bad_alloc&) {
    why = std::make_error_code(std::errc::not_enough_memory);
  }
  return Error{why, "could not start " + what + ": " + why.message()};
}

}  // namespace stoker::common

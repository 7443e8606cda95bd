// Runs a function on an io_context's thread and waits for its result: how
// other threads (stats, loads, reservations, shutdown) read or change state
// that only the engine thread touches. Never called on that thread itself:
// it would wait for itself.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <type_traits>

namespace stoker::engine::detail {

template <typename F>
auto run_and_wait(boost::asio::io_context& io, F f) {
  std::promise<decltype(f())> p;
  boost::asio::post(io, [&] {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      p.set_value();
    } else {
      p.set_value(f());
    }
  });
  return p.get_future().get();
}

}  // namespace stoker::engine::detail

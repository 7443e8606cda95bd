// ErrorAsException: adapts a handler of void(std::exception_ptr, JobReport)
// (what use_future and use_awaitable make of async_submit) to the engine's
// void(error_code, JobReport), turning a failure into a JobError. Its
// associated executor, allocator and cancellation slot are the wrapped
// handler's, so cancellation and handler placement work as for any handler.
#pragma once

#include <boost/asio/associator.hpp>
#include <boost/system/error_code.hpp>
#include <exception>
#include <utility>

#include "engine/job_error.hpp"
#include "engine/job_report.hpp"

namespace stoker::engine::detail {

template <typename Handler>
class ErrorAsException {
 public:
  explicit ErrorAsException(Handler handler) : handler_(std::move(handler)) {}

  void operator()(boost::system::error_code ec, JobReport report) && {
    std::exception_ptr failure;
    if (ec) failure = std::make_exception_ptr(JobError(ec, report));
    std::move(handler_)(failure, std::move(report));
  }

  Handler handler_;
};

}  // namespace stoker::engine::detail

template <template <typename, typename> class Associator, typename Handler,
          typename DefaultCandidate>
struct boost::asio::associator<Associator, stoker::engine::detail::ErrorAsException<Handler>,
                               DefaultCandidate> : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const stoker::engine::detail::ErrorAsException<Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler_);
  }
  static auto get(const stoker::engine::detail::ErrorAsException<Handler>& h,
                  const DefaultCandidate& c) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler_, c)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler_, c);
  }
};

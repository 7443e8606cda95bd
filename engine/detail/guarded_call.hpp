// A job's callables (producers, kernels, checks, validation) are the
// caller's code, run on engine threads. An exception one throws must fail
// its job, with the exception's text, like an error it returned: escaping
// an engine thread it would end the process, and nothing else would free
// what the job holds.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "common/error.hpp"
#include "common/host_memory_limit.hpp"

namespace stoker::engine::detail {

// Copies an exception's text into `thrown`. The copy allocates; if that
// fails too, `thrown` is left empty (the error code still says what
// happened) rather than throwing out of a noexcept function.
inline void keep_text(std::string& thrown, const char* text) noexcept {
  try {
    thrown = text;
  } catch (...) {
    thrown.clear();
  }
}

// Calls f(args...), which returns an error code. If it throws, returns
// Errc::callable_threw and puts the exception's text in `thrown`; for a
// std::bad_alloc that text names the host's memory limit and what the
// process takes of it.
template <typename F, typename... Args>
std::error_code guarded_call(std::string& thrown, F&& f, Args&&... args) noexcept {
  try {
    return std::forward<F>(f)(std::forward<Args>(args)...);
  } catch (const std::bad_alloc& e) {
    try {
      thrown = common::host_memory_refused(e.what()).what();
    } catch (...) {
      keep_text(thrown, e.what());
    }
  } catch (const std::exception& e) {
    keep_text(thrown, e.what());
  } catch (...) {
    keep_text(thrown, "an exception not derived from std::exception");
  }
  return make_error_code(Errc::callable_threw);
}

}  // namespace stoker::engine::detail

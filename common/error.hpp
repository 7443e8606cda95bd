// Errors in stoker: a std::error_code from one of two categories (`stoker` for
// the project's own conditions, `cuda` for CUDA runtime errors) plus, where the
// code alone would not tell a user what went wrong, a message that names the
// offending value. Result<T> carries either a value or such an Error.
//
// This is the base layer: every other layer (devices/, alloc/, kernels/,
// engine/, tools/) reports failures with these types, so they depend on
// nothing of ours. The names live in stoker::common and are re-exported into
// stoker::, where the layers and users write them
// (`Errc::invalid_argument`, `stoker::Result<int>`).
//
// Nothing here throws but Result::value() (and * and ->) of an Error: the
// caller asked for a value that is not there, and gets std::system_error
// with the error's code and message. A failure that depends on the machine
// or the input is a code the caller can branch on; exceptions are kept for
// programmer misuse at construction time.
#pragma once

#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

namespace stoker::common {

// The `stoker` category's codes. The last two are the engine's (a job's
// check or callable failed) but stay in this one enum: user callables
// return make_error_code(Errc::verification_failed) and user handlers
// compare against Errc::callable_threw, so moving them to an enum of the
// engine's would change the category they compare equal to.
enum class Errc {
  ok = 0,
  invalid_argument,      // bad input from a caller: sizes, indices, files
  no_device,             // no usable device of the requested kind
  out_of_device_memory,  // a device allocation or budget could not be met
  out_of_host_memory,    // a host allocation or budget could not be met
  not_supported,         // the operation does not exist on this backend
  device_fault,          // the device is in a sticky error state
  cancelled,             // cancelled by the caller (Asio uses operation_aborted)
  timed_out,             // a deadline passed
  shutting_down,         // the owner is being shut down
  kernel_failed,         // a kernel (or its CPU version) reported an error
  verification_failed,   // a result did not check out
  io_error,              // reading or writing a file failed
  callable_threw,        // a job's callable (producer, kernels, check) threw an exception
};

}  // namespace stoker::common

template <>
struct std::is_error_code_enum<stoker::common::Errc> : std::true_type {};

namespace stoker::common {

const std::error_category& stoker_category() noexcept;
// Codes are cudaError_t values; messages come from cudaGetErrorString.
const std::error_category& cuda_category() noexcept;

std::error_code make_error_code(Errc e) noexcept;
std::error_code make_cuda_error(int cuda_error) noexcept;

// The text every layer prints for a failed CUDA runtime call:
// "<what>: <cudaErrorName>: <description>", the cuda category's message
// after what failed. It also clears the runtime's last error, so a
// non-sticky failure (a bad argument, an allocation) is not reported again
// by the next cudaGetLastError, which is how kernel launches are checked; a
// sticky error stays, as CUDA keeps it.
std::string cuda_message(std::string_view what, int cuda_error);

// An error code and a message for people. `message` is empty when the code
// says it all; what() falls back to the code's own message.
struct Error {
  std::error_code code;
  std::string message;

  Error() = default;
  Error(std::error_code c, std::string m = {}) : code(c), message(std::move(m)) {}
  Error(Errc e, std::string m = {}) : code(make_error_code(e)), message(std::move(m)) {}

  explicit operator bool() const noexcept { return static_cast<bool>(code); }
  std::string what() const { return message.empty() ? code.message() : message; }
};

// A value or an Error: the small subset of std::expected that we need (the
// toolchains we build with do not all ship <expected>).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}
  Result(std::error_code c, std::string m = {}) : Result(Error{c, std::move(m)}) {}
  Result(Errc e, std::string m = {}) : Result(Error{e, std::move(m)}) {}

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // On an error, value() throws std::system_error with the error's code
  // and message (Config::from_env().value() must say which setting was bad).
  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  void check() const {
    if (const Error* e = std::get_if<1>(&v_))
      throw e->message.empty() ? std::system_error(e->code)
                               : std::system_error(e->code, e->message);
  }
  std::variant<T, Error> v_;
};

}  // namespace stoker::common

namespace stoker {
using common::cuda_category;
using common::cuda_message;
using common::Errc;
using common::Error;
using common::make_cuda_error;
using common::make_error_code;
using common::Result;
using common::stoker_category;
}  // namespace stoker

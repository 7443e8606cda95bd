// Stream and Event forward to their backend's implementation; an empty
// (moved-from) handle reports invalid_argument instead of crashing.
#include "devices/detail/backend_impl.hpp"
#include "devices/device.hpp"

namespace stoker::devices {
namespace {
std::error_code empty_handle() {
  return make_error_code(Errc::invalid_argument);
}
}  // namespace

Event::Event() noexcept = default;
Event::Event(std::unique_ptr<detail::EventImpl> impl) noexcept : impl_(std::move(impl)) {}
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;
Event::~Event() = default;

EventKind Event::kind() const noexcept {
  return impl_ ? impl_->kind() : EventKind::ordering;
}

Result<bool> Event::query() const {
  if (!impl_) return Error{empty_handle(), "query on an empty Event"};
  return impl_->query();
}

std::error_code Event::synchronize() const {
  return impl_ ? impl_->synchronize() : empty_handle();
}

Result<float> elapsed_ms(const Event& start, const Event& end) {
  if (!start.valid() || !end.valid())
    return Error{Errc::invalid_argument, "elapsed_ms on an empty Event"};
  if (start.kind() != EventKind::timing || end.kind() != EventKind::timing)
    return Error{Errc::invalid_argument, "elapsed_ms needs two timing events (EventKind::timing)"};
  if (start.impl()->backend() != end.impl()->backend())
    return Error{Errc::invalid_argument, "elapsed_ms between events of different backends"};
  return end.impl()->elapsed_since(*start.impl());
}

Stream::Stream() noexcept = default;
Stream::Stream(std::unique_ptr<detail::StreamImpl> impl) noexcept : impl_(std::move(impl)) {}
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;
Stream::~Stream() = default;

Backend Stream::backend() const noexcept {
  return impl_ ? impl_->backend() : Backend::host;
}
Device& Stream::device() const noexcept {
  return impl_->device();
}

std::error_code Stream::copy(void* dst, const void* src, std::size_t bytes) {
  if (!impl_) return empty_handle();
  if (bytes == 0) return {};
  if (dst == nullptr || src == nullptr) return make_error_code(Errc::invalid_argument);
  return impl_->copy(dst, src, bytes);
}

std::error_code Stream::record(Event& event) {
  if (!impl_ || !event.valid()) return empty_handle();
  if (event.impl()->backend() != impl_->backend()) return make_error_code(Errc::invalid_argument);
  return impl_->record(*event.impl());
}

std::error_code Stream::wait(const Event& event) {
  if (!impl_ || !event.valid()) return empty_handle();
  if (event.impl()->backend() != impl_->backend()) return make_error_code(Errc::invalid_argument);
  return impl_->wait(*event.impl());
}

std::error_code Stream::enqueue_host(HostTask task) {
  if (!impl_ || !task) return empty_handle();
  return impl_->enqueue_host(std::move(task));
}

std::error_code Stream::synchronize() {
  return impl_ ? impl_->synchronize() : empty_handle();
}

void* Stream::native() const noexcept {
  return impl_ ? impl_->native() : nullptr;
}

void DeviceBuffer::reset() noexcept {
  if (ptr_ != nullptr && device_ != nullptr) device_->release(ptr_, bytes_);
  device_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

const char* to_string(Backend b) noexcept {
  return b == Backend::cuda ? "cuda" : "host";
}

}  // namespace stoker::devices

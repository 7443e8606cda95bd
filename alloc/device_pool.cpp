#include "alloc/device_pool.hpp"

#include <cassert>

namespace stoker::alloc {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}

std::error_code DeviceBlock::release(devices::Stream& stream) noexcept {
  if (pool_ == nullptr) return {};
  auto ec = pool_->free(*this, stream);
  pool_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
  stream_ = nullptr;
  reservation_.release();
  return ec;
}

void DeviceBlock::reset() noexcept {
  if (pool_ != nullptr) release(*stream_);
}

DevicePool::DevicePool(devices::Device& device, MemoryBudget& budget, DevicePoolOptions options)
    : device_(device), budget_(budget) {
  init_error_ = device_.set_pool_release_threshold(options.release_threshold);
}

DevicePool::~DevicePool() {
  assert(blocks_in_use_.load() == 0 && "DevicePool destroyed while blocks are held");
}

Result<DeviceBlock> DevicePool::allocate(std::size_t bytes, devices::Stream& stream) {
  if (bytes == 0) {
    failed_.fetch_add(1, kRelaxed);
    return Error{Errc::invalid_argument, "device pool: allocation of 0 bytes"};
  }
  assert(&stream.device() == &device_ && "DevicePool::allocate: stream of another device");
  auto r = budget_.try_acquire(bytes);
  if (!r) {
    failed_.fetch_add(1, kRelaxed);
    return std::move(r).error();
  }
  return allocate_reserved(bytes, stream, std::move(*r));
}

Result<DeviceBlock> DevicePool::allocate_reserved(std::size_t bytes, devices::Stream& stream,
                                                  Reservation r) {
  auto p = device_.allocate_async(bytes, stream);
  if (!p) {
    failed_.fetch_add(1, kRelaxed);
    return std::move(p).error();  // the bytes go back with `r`
  }
  DeviceBlock b;
  b.pool_ = this;
  b.ptr_ = *p;
  b.bytes_ = bytes;
  b.stream_ = &stream;
  b.reservation_ = std::move(r);
  allocations_.fetch_add(1, kRelaxed);
  blocks_in_use_.fetch_add(1, kRelaxed);
  const auto now = bytes_in_use_.fetch_add(bytes, kRelaxed) + bytes;
  auto peak = high_water_.load(kRelaxed);
  while (now > peak && !high_water_.compare_exchange_weak(peak, now, kRelaxed)) {
  }
  return b;
}

std::error_code DevicePool::free(DeviceBlock& block, devices::Stream& stream) noexcept {
  assert(&stream.device() == &device_ && "DeviceBlock::release: stream of another device");
  bytes_in_use_.fetch_sub(block.bytes_, kRelaxed);
  blocks_in_use_.fetch_sub(1, kRelaxed);
  return device_.free_async(block.ptr_, stream);
}

DevicePoolStats DevicePool::stats() const noexcept {
  DevicePoolStats s;
  s.bytes_in_use = bytes_in_use_.load(kRelaxed);
  s.blocks_in_use = blocks_in_use_.load(kRelaxed);
  s.high_water = high_water_.load(kRelaxed);
  s.allocations = allocations_.load(kRelaxed);
  s.failed_requests = failed_.load(kRelaxed);
  return s;
}

}  // namespace stoker::alloc

// Test helper: puts `ms` milliseconds of device work on a stream (a spinning
// kernel on CUDA, a sleeping task on the host backend), to prove that
// ordering holds even when the producer is slow.
#pragma once

#include <system_error>

#include "devices/stream.hpp"

namespace stoker::test {
std::error_code enqueue_delay(devices::Stream& stream, int ms);
// Writes `value` into one int of device memory from a kernel (CUDA) or task.
std::error_code enqueue_store(devices::Stream& stream, int* device_ptr, int value);
}  // namespace stoker::test

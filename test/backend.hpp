// Suites that must hold on both backends are compiled twice: once with
// STOKER_TEST_BACKEND_HOST on the host backend (label host, run in CI), once
// without it on CUDA (label gpu, skipped visibly without a GPU). The same
// test then shows in CTest as host.Suite.Name and gpu.Suite.Name.
#pragma once

#include <gtest/gtest.h>

#include "devices/device_set.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::test {

#if defined(STOKER_TEST_BACKEND_HOST)
inline constexpr devices::Backend kBackend = devices::Backend::host;
#define STOKER_REQUIRE_BACKEND() \
  do {                           \
  } while (0)
#else
inline constexpr devices::Backend kBackend = devices::Backend::cuda;
#define STOKER_REQUIRE_BACKEND() STOKER_REQUIRE_GPU()
#endif

}  // namespace stoker::test

// The alloc suites that touch memory run twice: built with
// STOKER_TEST_BACKEND_HOST on the host backend (CI), and without it on CUDA
// (label gpu, skipped without a GPU).
#pragma once

#include <gtest/gtest.h>

#include "devices/device_set.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::alloc::test {

#if defined(STOKER_TEST_BACKEND_HOST)
inline constexpr devices::Backend kBackend = devices::Backend::host;
#define STOKER_ALLOC_REQUIRE_BACKEND() \
  do {                                 \
  } while (0)
#else
inline constexpr devices::Backend kBackend = devices::Backend::cuda;
#define STOKER_ALLOC_REQUIRE_BACKEND() STOKER_REQUIRE_GPU()
#endif

inline devices::DeviceSet devices_for_test() {
  devices::DiscoverOptions o;
  o.backend = kBackend == devices::Backend::host ? devices::BackendChoice::host
                                                 : devices::BackendChoice::cuda;
  if (kBackend == devices::Backend::cuda) o.cuda_ordinals = {0};
  auto set = devices::discover(o);
  EXPECT_TRUE(set) << set.error().what();
  return std::move(*set);
}

}  // namespace stoker::alloc::test

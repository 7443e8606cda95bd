// The alloc suites that touch memory run on both backends (test/backend.hpp):
// the pool and device-pool behaviour on the host backend in CI, and again on
// CUDA (label gpu, skipped without a GPU).
#pragma once

#include <gtest/gtest.h>

#include "devices/device_set.hpp"
#include "test/backend.hpp"

namespace stoker::alloc::test {

using stoker::test::kBackend;
#define STOKER_ALLOC_REQUIRE_BACKEND() STOKER_REQUIRE_BACKEND()

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

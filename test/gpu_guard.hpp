// Shared by every GPU suite: skip visibly (reported as skipped by CTest) when
// the machine has no CUDA device, so CI without a GPU stays honest.
#pragma once

#include <gtest/gtest.h>

#include "devices/device_set.hpp"

#define STOKER_REQUIRE_GPU()                                       \
  do {                                                             \
    if (::stoker::devices::cuda_device_count() == 0)               \
      GTEST_SKIP() << "no CUDA device on this machine (GPU test)"; \
  } while (0)

// For what only shows with several GPUs (which device a thread has current,
// one GPU faulting beside a healthy one).
#define STOKER_REQUIRE_GPUS(n)                                                    \
  do {                                                                            \
    if (::stoker::devices::cuda_device_count() < (n))                             \
      GTEST_SKIP() << "needs " << (n) << " CUDA devices, this machine has "       \
                   << ::stoker::devices::cuda_device_count() << " (multi-GPU test)"; \
  } while (0)

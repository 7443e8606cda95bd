// Without a profiler the engine's NVTX ranges are no-ops: nothing attached,
// no domain or name registered, and a range reports that no tool tracks it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/detail/nvtx.hpp"

namespace stoker::engine::detail::nvtx {
namespace {

TEST(NvtxRanges, AreNoOpsWhenNoToolListens) {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr)
    GTEST_SKIP() << "a profiler is attached (NVTX_INJECTION64_PATH is set)";
  const ScopedRange outer(Stage::job, 1);
  const ScopedRange inner(Stage::h2d, 2);
  EXPECT_EQ(outer.level(), NVTX_NO_PUSH_POP_TRACKING);
  EXPECT_EQ(inner.level(), NVTX_NO_PUSH_POP_TRACKING);
  EXPECT_EQ(names().domain, nullptr);
  for (auto* s : names().stage) EXPECT_EQ(s, nullptr);
  Span span(Stage::partition, 3, "p#3");  // ends when destroyed, harmlessly
}

}  // namespace
}  // namespace stoker::engine::detail::nvtx

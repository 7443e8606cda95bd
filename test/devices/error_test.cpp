#include "devices/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace stoker {
namespace {

// cudaErrorMemoryAllocation and cudaErrorInvalidValue, as the runtime
// numbers them; the texts are lookups that need no driver or GPU.
constexpr int kCudaOutOfMemory = 2;
constexpr int kCudaInvalidValue = 1;

TEST(CudaMessage, NamesWhatFailedTheErrorAndItsDescription) {
  EXPECT_EQ(cuda_message("cudaMalloc of 4096 bytes", kCudaOutOfMemory),
            "cudaMalloc of 4096 bytes: cudaErrorMemoryAllocation: out of memory");
}

TEST(CudaMessage, MatchesTheCudaCategorysMessage) {
  const std::error_code ec = make_cuda_error(kCudaInvalidValue);
  EXPECT_EQ(ec.category().name(), std::string("cuda"));
  EXPECT_EQ(cuda_message("copy", kCudaInvalidValue), "copy: " + ec.message());
}

TEST(CudaError, SuccessIsNoError) {
  EXPECT_FALSE(make_cuda_error(0));
}

}  // namespace
}  // namespace stoker
